//! The scale-out plot: pages per second against crawler processes, beside a linear scale-out.

use anyhow::Result;
use plotters::prelude::*;

use super::{DESC_SIZE, FONT, LABEL_SIZE, Mark, colour, layout, plot_error};
use crate::scale_out::ScaleOut;

/// Measured medians (with min–max whiskers) and the line of N times the single-process median.
/// `None` without a single-process figure.
pub fn pages_per_second(area: &super::Area<'_>, s: &ScaleOut) -> Result<Option<String>> {
    let points: Vec<(f64, f64, f64, f64)> = s
        .counts
        .iter()
        .filter_map(|c| {
            let p = c.pages_per_second?;
            Some((c.processes as f64, p.median, p.min, p.max))
        })
        .collect();
    let Some(single) = points.iter().find(|p| p.0 == 1.0).map(|p| p.1) else {
        return Ok(None);
    };
    let most = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let top = points.iter().map(|p| p.3).fold(single * most, f64::max) * 1.15;
    let title = "Crawler scale-out on a three-node cluster (pages/s)".to_string();
    let measured = colour(0);
    let entries = vec![
        (
            Mark::Line(measured),
            "measured (median; whisker min–max)".to_string(),
        ),
        (Mark::Dashed(BLACK), "linear (N × one process)".to_string()),
    ];
    let plot = layout(area, &title, &entries)?;
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .margin_right(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(0.5f64..most + 0.5, 0f64..top)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .x_labels(points.len().max(2) * 2)
        .x_label_formatter(&|x| {
            if x.fract() == 0.0 {
                format!("{x:.0}")
            } else {
                String::new()
            }
        })
        .y_label_formatter(&|y| format!("{y:.0}"))
        .x_desc("crawler processes")
        .y_desc("pages per second")
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, DESC_SIZE))
        .draw()
        .map_err(plot_error)?;
    chart
        .draw_series(DashedLineSeries::new(
            [(1.0, single), (most, single * most)],
            8,
            5,
            BLACK.stroke_width(1),
        ))
        .map_err(plot_error)?;
    chart
        .draw_series(LineSeries::new(
            points.iter().map(|p| (p.0, p.1)),
            measured.stroke_width(3),
        ))
        .map_err(plot_error)?;
    chart
        .draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.0, p.1), 5, measured.filled())),
        )
        .map_err(plot_error)?;
    chart
        .draw_series(
            points
                .iter()
                .map(|p| PathElement::new(vec![(p.0, p.2), (p.0, p.3)], measured.stroke_width(2))),
        )
        .map_err(plot_error)?;
    Ok(Some(title))
}
