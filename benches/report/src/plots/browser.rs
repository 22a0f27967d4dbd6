//! The browser plot: rendered pages per second (log axis, left) and peak memory (right) against
//! tabs (log axis, so that linear scaling from one tab is a straight line), beside that linear
//! scaling, the HTTP client's rate and the memory limit.

use anyhow::Result;
use plotters::prelude::*;

use super::{DESC_SIZE, FONT, LABEL_SIZE, Mark, colour, layout, log_axis, log_tick, plot_error};
use crate::browser::Browser;

/// Colour of the memory limit.
const LIMIT: RGBColor = RGBColor(200, 30, 30);

/// One tab count: tabs, pages/s (median, min, max), peak memory (max over the runs, MiB).
type Point = (f64, f64, f64, f64, Option<f64>);

/// What the plot shows, and its axes.
struct Data {
    points: Vec<Point>,
    /// Pages/s with one tab.
    single: Option<f64>,
    /// The most tabs.
    most: f64,
    /// The HTTP client's pages/s and its concurrency.
    http: Option<(f64, u64)>,
    /// `browser.max.rss.mb`.
    limit: Option<f64>,
    /// The pages/s axis: bounds and ticks.
    rates: (f64, f64, Vec<f64>),
    /// The top of the memory axis.
    memory_top: f64,
}

/// `None` without any tab count's pages/s.
fn data(b: &Browser) -> Option<Data> {
    let points: Vec<Point> = b
        .tabs
        .iter()
        .filter_map(|c| {
            let p = c.pages_per_second.filter(|p| p.median > 0.0)?;
            let memory = c.peak_memory_mib.map(|m| m.max);
            Some((c.tabs? as f64, p.median, p.min, p.max, memory))
        })
        .collect();
    if points.is_empty() {
        return None;
    }
    let single = points.iter().find(|p| p.0 == 1.0).map(|p| p.1);
    let most = points.iter().map(|p| p.0).fold(1.0, f64::max);
    let http = b.http.as_ref().and_then(|h| {
        let rate = h.pages_per_second?.median;
        Some((rate, h.concurrency.unwrap_or(0)))
    });
    let values = points
        .iter()
        .flat_map(|p| [p.1, p.2.max(p.1 / 10.0), p.3])
        .chain(http.map(|h| h.0))
        .chain(single.map(|s| s * most));
    let rates = log_axis(values, 1.5)?;
    let limit = b.settings.max_rss_mb;
    let memory_top = points
        .iter()
        .filter_map(|p| p.4)
        .chain(limit)
        .fold(1.0, f64::max)
        * 1.15;
    Some(Data {
        points,
        single,
        most,
        http,
        limit,
        rates,
        memory_top,
    })
}

/// The legend.
fn entries(d: &Data) -> Vec<(Mark, String)> {
    let mut entries = vec![(Mark::Line(colour(0)), "rendered pages/s".to_string())];
    if d.single.is_some() {
        entries.push((Mark::Dashed(BLACK), "N × 1 tab".to_string()));
    }
    if let Some((_, n)) = d.http {
        entries.push((Mark::Dashed(colour(2)), format!("HTTP, {n} at once")));
    }
    entries.push((Mark::Line(colour(1)), "peak memory (right)".to_string()));
    if d.limit.is_some() {
        entries.push((Mark::Dashed(LIMIT), "memory limit (right)".to_string()));
    }
    entries
}

/// `None` without any tab count's pages/s.
pub fn pages_and_memory(area: &super::Area<'_>, b: &Browser) -> Result<Option<String>> {
    let Some(d) = data(b) else {
        return Ok(None);
    };
    let title = "Browser: rendered pages/s and peak memory by tabs".to_string();
    let plot = layout(area, &title, &entries(&d))?;
    draw(&plot, &d)?;
    Ok(Some(title))
}

/// Draws the axes and the series of `d` on `plot`.
fn draw(plot: &super::Area<'_>, d: &Data) -> Result<()> {
    let (points, most, (lo, hi, ticks)) = (&d.points, d.most, d.rates.clone());
    let (rate, memory) = (colour(0), colour(1));
    let (left, right) = (0.75, most * 1.33);
    let tabs: Vec<f64> = points.iter().map(|p| p.0).collect();
    let x_axis = || (left..right).log_scale().with_key_points(tabs.clone());
    let mut chart = ChartBuilder::on(plot)
        .margin(10)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .right_y_label_area_size(80)
        .build_cartesian_2d(x_axis(), (lo..hi).log_scale().with_key_points(ticks))
        .map_err(plot_error)?
        .set_secondary_coord(x_axis(), 0f64..d.memory_top);
    chart
        .configure_mesh()
        .x_label_formatter(&|x| format!("{x:.0}"))
        .y_label_formatter(&log_tick)
        .x_desc("tabs")
        .y_desc("pages per second (median; whisker min–max)")
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, DESC_SIZE))
        .draw()
        .map_err(plot_error)?;
    chart
        .configure_secondary_axes()
        .y_desc("peak memory (MiB, PSS)")
        .y_label_formatter(&|y| format!("{y:.0}"))
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, DESC_SIZE))
        .draw()
        .map_err(plot_error)?;

    let dashed = |from: (f64, f64), to: (f64, f64), c: RGBColor| {
        DashedLineSeries::new([from, to], 8, 5, c.stroke_width(2))
    };
    if let Some(s) = d.single {
        chart
            .draw_series(dashed((1.0, s), (most, s * most), BLACK))
            .map_err(plot_error)?;
    }
    if let Some((h, _)) = d.http {
        chart
            .draw_series(dashed((left, h), (right, h), colour(2)))
            .map_err(plot_error)?;
    }
    chart
        .draw_series(LineSeries::new(
            points.iter().map(|p| (p.0, p.1)),
            rate.stroke_width(3),
        ))
        .map_err(plot_error)?;
    chart
        .draw_series(
            points
                .iter()
                .map(|p| Circle::new((p.0, p.1), 5, rate.filled())),
        )
        .map_err(plot_error)?;
    chart
        .draw_series(
            points.iter().map(|p| {
                PathElement::new(vec![(p.0, p.2.max(lo)), (p.0, p.3)], rate.stroke_width(2))
            }),
        )
        .map_err(plot_error)?;
    let memory_points: Vec<(f64, f64)> = points.iter().filter_map(|p| Some((p.0, p.4?))).collect();
    chart
        .draw_secondary_series(LineSeries::new(
            memory_points.iter().copied(),
            memory.stroke_width(3),
        ))
        .map_err(plot_error)?;
    chart
        .draw_secondary_series(
            memory_points
                .iter()
                .map(|p| Circle::new(*p, 5, memory.filled())),
        )
        .map_err(plot_error)?;
    if let Some(limit) = d.limit {
        chart
            .draw_secondary_series(dashed((left, limit), (right, limit), LIMIT))
            .map_err(plot_error)?;
    }
    Ok(())
}
