//! The URLFrontier plot: URLs per second in process and through the API, two bars per frontier.

use anyhow::Result;
use plotters::prelude::*;

use super::{
    Area, Categories, DESC_SIZE, FONT, LABEL_SIZE, Mark, bars_with_whiskers, colour, layout,
    log_axis, log_tick, plot_error,
};
use crate::input::Spread;
use crate::urlfrontier::{UrlFrontier, ratio_label};

/// The two paths, in bar order: the figure of each, and its legend text.
type Path = (
    fn(&crate::urlfrontier::Frontier) -> Option<Spread>,
    &'static str,
);

const PATHS: [Path; 2] = [
    (|f| f.in_process, "in process (spout runner)"),
    (|f| f.api, "through the API"),
];

/// Grouped bars on a log axis, a min–max whisker on each; the frontier's labels carry the ratio.
/// `None` without any positive figure.
pub fn urls_per_second(area: &Area<'_>, u: &UrlFrontier) -> Result<Option<String>> {
    let figure = |f: &crate::urlfrontier::Frontier, path: usize| {
        (PATHS[path].0)(f).filter(|s| s.median.is_finite() && s.median > 0.0)
    };
    let values = u
        .frontiers
        .iter()
        .flat_map(|f| (0..PATHS.len()).filter_map(move |p| figure(f, p)))
        .flat_map(|s| [s.median, s.min, s.max]);
    let Some((lo, hi, ticks)) = log_axis(values, 1.5) else {
        return Ok(None);
    };
    let title = "URLFrontier API: URLs/s through squall's server and in process".to_string();
    let entries: Vec<(Mark, String)> = PATHS
        .iter()
        .enumerate()
        .map(|(i, (_, name))| (Mark::Bar(colour(i)), name.to_string()))
        .collect();
    let plot = layout(area, &title, &entries)?;

    let labels: Vec<String> = u.frontiers.iter().map(ratio_label).collect();
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .x_label_area_size(50)
        .y_label_area_size(80)
        .build_cartesian_2d(
            Categories(u.frontiers.len()),
            (lo..hi).log_scale().with_key_points(ticks),
        )
        .map_err(plot_error)?;
    let label_of = |x: &f64| labels.get(x.floor() as usize).cloned().unwrap_or_default();
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&label_of)
        .y_label_formatter(&log_tick)
        .x_desc("frontier: API / in process (medians)")
        .y_desc("URLs per second (median; whisker min–max)")
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, DESC_SIZE))
        .draw()
        .map_err(plot_error)?;

    let width = 0.8 / PATHS.len() as f64;
    for path in 0..PATHS.len() {
        let c = colour(path);
        let bars: Vec<(f64, Spread)> = u
            .frontiers
            .iter()
            .enumerate()
            .filter_map(|(i, f)| Some((i as f64 + 0.1 + width * path as f64, figure(f, path)?)))
            .collect();
        bars_with_whiskers(&mut chart, &bars, width, lo, c)?;
    }
    Ok(Some(title))
}
