//! The spout plots: URLs emitted per second, and query latency against index size.

use anyhow::Result;
use plotters::prelude::*;

use super::{
    Area, Categories, DESC_SIZE, FONT, LABEL_SIZE, Mark, bars_with_whiskers, colour, layout,
    log_axis, log_tick, plot_error,
};
use crate::format::size;
use crate::input::Spread;
use crate::spouts::Spouts;
use crate::spouts::{find, label_of, sorted_sizes, spout_names};

/// Grouped bars: one group per spout, one bar per index size, log y axis,
/// with a min–max whisker on each bar. `None` if there is no positive value.
pub fn urls_per_second(area: &Area<'_>, s: &Spouts) -> Result<Option<String>> {
    let sizes = sorted_sizes(s);
    let names = spout_names(&sizes);
    let spread = |si: usize, name: &str| -> Option<Spread> {
        sizes
            .get(si)
            .and_then(|sz| find(sz, name))
            .and_then(|sp| sp.urls_per_second)
            .filter(|u| u.median.is_finite() && u.median > 0.0)
    };
    let values = (0..sizes.len())
        .flat_map(|si| names.iter().filter_map(move |n| spread(si, n)))
        .flat_map(|u| [u.median, u.min, u.max]);
    let Some((lo, hi, ticks)) = log_axis(values, 1.5) else {
        return Ok(None);
    };
    let title = "URLs emitted per second (immediate-ack fetcher)".to_string();
    let entries: Vec<(Mark, String)> = sizes
        .iter()
        .enumerate()
        .map(|(si, sz)| (Mark::Bar(colour(si)), format!("{} URLs", size(sz.urls))))
        .collect();
    let plot = layout(area, &title, &entries)?;

    let n = names.len();
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(Categories(n), (lo..hi).log_scale().with_key_points(ticks))
        .map_err(plot_error)?;
    let label_of = |x: &f64| names.get(x.floor() as usize).cloned().unwrap_or_default();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&label_of)
        .y_label_formatter(&log_tick)
        .x_desc("spout")
        .y_desc("URLs per second (median; whisker min–max)")
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, DESC_SIZE))
        .draw()
        .map_err(plot_error)?;

    let groups = sizes.len().max(1) as f64;
    let width = 0.8 / groups;
    for si in 0..sizes.len() {
        let c = colour(si);
        let bars: Vec<(f64, Spread)> = names
            .iter()
            .enumerate()
            .filter_map(|(i, n)| spread(si, n).map(|u| (i as f64 + 0.1 + width * si as f64, u)))
            .collect();
        bars_with_whiskers(&mut chart, &bars, width, lo, c)?;
    }
    Ok(Some(title))
}

/// Query latency (log) against URLs in the index (log): p99 solid with
/// markers, p50 dashed, one colour per spout. `None` if there is no positive value.
pub fn query_latency(area: &Area<'_>, s: &Spouts) -> Result<Option<String>> {
    let sizes = sorted_sizes(s);
    let names = spout_names(&sizes);
    let positive = |v: f64| v.is_finite() && v > 0.0;
    // (spout, p50 points, p99 points), each point (URLs, median ms).
    type Points = Vec<(f64, f64)>;
    let series: Vec<(String, Points, Points)> = names
        .iter()
        .map(|name| {
            let points = |pick: fn(&crate::spouts::SpoutResult) -> Option<Spread>| -> Points {
                sizes
                    .iter()
                    .filter(|sz| sz.urls > 0)
                    .filter_map(|sz| {
                        let median = find(sz, name).and_then(pick)?.median;
                        positive(median).then_some((sz.urls as f64, median))
                    })
                    .collect()
            };
            (
                name.clone(),
                points(|sp| sp.query_ms_p50),
                points(|sp| sp.query_ms_p99),
            )
        })
        .filter(|(_, p50, p99)| !p50.is_empty() || !p99.is_empty())
        .collect();
    let latencies = series
        .iter()
        .flat_map(|(_, p50, p99)| p50.iter().chain(p99).map(|p| p.1));
    let Some((lo, hi, ticks)) = log_axis(latencies, 1.5) else {
        return Ok(None);
    };
    let urls: Vec<f64> = sizes
        .iter()
        .filter(|sz| sz.urls > 0)
        .map(|sz| sz.urls as f64)
        .collect();
    let (Some(first), Some(last)) = (urls.first(), urls.last()) else {
        return Ok(None);
    };
    let title = "Spout query latency, p50 (dashed) and p99 (solid)".to_string();
    let mut entries: Vec<(Mark, String)> = series
        .iter()
        .enumerate()
        .map(|(i, (name, _, _))| (Mark::Line(colour(i)), label_of(&sizes, name)))
        .collect();
    entries.push((Mark::Line(BLACK), "p99".to_string()));
    entries.push((Mark::Dashed(BLACK), "p50".to_string()));
    let plot = layout(area, &title, &entries)?;

    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .margin_right(30)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(
            (first / 1.6..last * 1.6)
                .log_scale()
                .with_key_points(urls.clone()),
            (lo..hi).log_scale().with_key_points(ticks),
        )
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|x| size(x.round() as u64))
        .y_label_formatter(&log_tick)
        .x_desc("URLs in the index")
        .y_desc("query latency, ms (median of runs)")
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, DESC_SIZE))
        .draw()
        .map_err(plot_error)?;

    for (i, (_, p50, p99)) in series.iter().enumerate() {
        let c = colour(i);
        chart
            .draw_series(LineSeries::new(p99.iter().copied(), c.stroke_width(2)))
            .map_err(plot_error)?;
        chart
            .draw_series(p99.iter().map(|p| Circle::new(*p, 4, c.filled())))
            .map_err(plot_error)?;
        chart
            .draw_series(DashedLineSeries::new(
                p50.iter().copied(),
                8,
                5,
                c.stroke_width(2),
            ))
            .map_err(plot_error)?;
        chart
            .draw_series(p50.iter().map(|p| Circle::new(*p, 3, c.stroke_width(2))))
            .map_err(plot_error)?;
    }
    Ok(Some(title))
}
