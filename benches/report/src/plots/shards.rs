//! The shard skew plot: documents per shard at the largest index size.

use anyhow::Result;
use plotters::prelude::*;

use super::{Area, Categories, DESC_SIZE, FONT, LABEL_SIZE, Mark, colour, layout, plot_error};
use crate::format::{ratio, size, thousands};
use crate::spouts::sorted_sizes;
use crate::spouts::{ShardSkew, Spouts};

/// Bars of documents per shard for the status index (routed by host) and the
/// urls index side by side, with a dashed line at each mean. `None` if no size
/// has shard counts.
pub fn shard_skew(area: &Area<'_>, s: &Spouts) -> Result<Option<String>> {
    let Some((urls, shards)) = sorted_sizes(s).into_iter().rev().find_map(|sz| {
        let shards = sz.shards.as_ref()?;
        let has_docs = |x: &Option<ShardSkew>| x.as_ref().is_some_and(|x| !x.docs.is_empty());
        (has_docs(&shards.status_routed) || has_docs(&shards.urls)).then_some((sz.urls, shards))
    }) else {
        return Ok(None);
    };
    let indices = [
        (
            "status index, routed by host",
            shards.status_routed.as_ref(),
        ),
        ("urls index", shards.urls.as_ref()),
    ];
    let skew = |x: Option<&ShardSkew>| ratio(x.and_then(|x| x.skew));
    let title = format!(
        "Documents per shard at {} URLs (skew: status {}, urls {})",
        size(urls),
        skew(indices[0].1),
        skew(indices[1].1)
    );
    let mut entries: Vec<(Mark, String)> = indices
        .iter()
        .enumerate()
        .filter(|(_, (_, x))| x.is_some_and(|x| !x.docs.is_empty()))
        .map(|(k, (label, _))| (Mark::Bar(colour(k)), label.to_string()))
        .collect();
    entries.push((Mark::Dashed(BLACK), "mean of each index".to_string()));
    let plot = layout(area, &title, &entries)?;

    let n = indices
        .iter()
        .map(|(_, x)| x.map_or(0, |x| x.docs.len()))
        .max()
        .unwrap_or(0);
    let top = indices
        .iter()
        .filter_map(|(_, x)| x.and_then(|x| x.docs.iter().copied().max()))
        .max()
        .unwrap_or(0)
        .max(1) as f64
        * 1.1;
    let mut chart = ChartBuilder::on(&plot)
        .margin(10)
        .x_label_area_size(50)
        .y_label_area_size(90)
        .build_cartesian_2d(Categories(n), 0f64..top)
        .map_err(plot_error)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|x| format!("{}", x.floor()))
        .y_label_formatter(&|y| thousands(y.round().max(0.0) as u64))
        .x_desc("shard")
        .y_desc("documents")
        .label_style((FONT, LABEL_SIZE))
        .axis_desc_style((FONT, DESC_SIZE))
        .draw()
        .map_err(plot_error)?;

    for (k, (_, index)) in indices.iter().enumerate() {
        let Some(index) = index.filter(|x| !x.docs.is_empty()) else {
            continue;
        };
        let c = colour(k);
        let x0 = |i: usize| i as f64 + 0.1 + 0.4 * k as f64;
        chart
            .draw_series(
                index.docs.iter().enumerate().map(|(i, d)| {
                    Rectangle::new([(x0(i), 0.0), (x0(i) + 0.4, *d as f64)], c.filled())
                }),
            )
            .map_err(plot_error)?;
        let mean = index.docs.iter().map(|d| *d as f64).sum::<f64>() / index.docs.len() as f64;
        chart
            .draw_series(DashedLineSeries::new(
                [(0.0, mean), (n as f64, mean)],
                8,
                5,
                c.mix(0.9).stroke_width(2),
            ))
            .map_err(plot_error)?;
    }
    Ok(Some(title))
}
