//! The stage ratio plot: each stage against its baseline.

use anyhow::Result;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::{Area, Categories, DESC_SIZE, FONT, LABEL_SIZE, Mark, colour, layout, plot_error};
use crate::format::ratio;
use crate::stages::Stage;

/// Colour of the aim ticks.
const AIM: RGBColor = RGBColor(200, 30, 30);

/// Horizontal bars of each stage's ratio, a dashed line at 1.0 and a tick at
/// each aim. `None` if no stage has a ratio.
pub fn stage_ratios(area: &Area<'_>, stages: &[Stage]) -> Result<Option<String>> {
    let rows: Vec<(&Stage, f64)> = stages
        .iter()
        .filter_map(|s| s.ratio.filter(|r| r.is_finite()).map(|r| (s, r.max(0.0))))
        .collect();
    if rows.is_empty() {
        return Ok(None);
    }
    let title = "squall against its baseline (ratio, 1.0 = baseline)".to_string();
    let met = colour(0);
    let missed = colour(5);
    let mut entries = vec![(Mark::Bar(met), "ratio".to_string())];
    if rows.iter().any(|(s, _)| s.miss.is_some()) {
        entries.push((Mark::Bar(missed), "ratio, aim missed".to_string()));
    }
    entries.push((Mark::Tick(AIM), "aim".to_string()));
    entries.push((Mark::Dashed(BLACK), "baseline (1.0)".to_string()));
    let plot = layout(area, &title, &entries)?;

    let n = rows.len();
    let right = rows
        .iter()
        .map(|(s, r)| r.max(s.aim.unwrap_or(0.0)))
        .fold(1.0f64, f64::max)
        * 1.25;
    // Row 0 at the top: the bar of row i spans y in [n-1-i, n-i].
    let y_of = |i: usize| (n - 1 - i) as f64;
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .margin_right(20)
        .x_label_area_size(50)
        .y_label_area_size(160)
        .build_cartesian_2d(0f64..right, Categories(n))
        .map_err(plot_error)?;
    let label_of = |y: &f64| {
        let row = n.saturating_sub(1 + y.floor().max(0.0) as usize);
        rows.get(row)
            .map(|(s, _)| s.name.to_string())
            .unwrap_or_default()
    };
    chart
        .configure_mesh()
        .disable_y_mesh()
        .light_line_style(TRANSPARENT)
        .y_label_formatter(&label_of)
        .x_label_formatter(&|x| format!("{x:.1}"))
        .x_desc("squall / baseline (median)")
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, DESC_SIZE))
        .draw()
        .map_err(plot_error)?;

    chart
        .draw_series(rows.iter().enumerate().map(|(i, (s, r))| {
            let c = if s.miss.is_some() { missed } else { met };
            Rectangle::new([(0.0, y_of(i) + 0.2), (*r, y_of(i) + 0.8)], c.filled())
        }))
        .map_err(plot_error)?;
    // The values stand in a column at the right edge, clear of bars and ticks.
    let value_style =
        TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    chart
        .draw_series(rows.iter().enumerate().map(|(i, (_, r))| {
            EmptyElement::at((right, y_of(i) + 0.5))
                + Text::new(ratio(Some(*r)), (-6, 0), value_style.clone())
        }))
        .map_err(plot_error)?;
    chart
        .draw_series(DashedLineSeries::new(
            [(1.0, 0.0), (1.0, n as f64)],
            8,
            5,
            BLACK.stroke_width(1),
        ))
        .map_err(plot_error)?;
    chart
        .draw_series(rows.iter().enumerate().filter_map(|(i, (s, _))| {
            let aim = s.aim?;
            Some(PathElement::new(
                vec![(aim, y_of(i) + 0.1), (aim, y_of(i) + 0.9)],
                AIM.stroke_width(3),
            ))
        }))
        .map_err(plot_error)?;
    Ok(Some(title))
}
