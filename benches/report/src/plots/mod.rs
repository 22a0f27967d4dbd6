//! SVG plots of the results, and the pieces they share: size, fonts, colours,
//! log axis ticks and a legend drawn beside the chart.

mod browser;
mod scale_out;
mod shards;
mod spouts;
mod stages;
mod urlfrontier;

use std::ops::Range;
use std::path::Path;

use anyhow::{Context, Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::results::Results;
use crate::stages::Stage;

/// Width and height of every plot, in pixels.
const SIZE: (u32, u32) = (900, 500);
/// Smallest width of the legend column at the right of each plot.
const LEGEND_MIN_WIDTH: u32 = 120;
/// Font family of all text.
const FONT: &str = "sans-serif";
// plotters writes font sizes divided by 1.24 into the SVG.
/// Font size of plot titles.
const TITLE_SIZE: u32 = 26;
/// Font size of tick labels and the legend.
const LABEL_SIZE: u32 = 19;
/// Font size of axis descriptions.
const DESC_SIZE: u32 = 20;

/// Series colours, a colour-blind friendly qualitative palette.
const COLOURS: [RGBColor; 8] = [
    RGBColor(0, 114, 178),
    RGBColor(230, 159, 0),
    RGBColor(0, 158, 115),
    RGBColor(204, 121, 167),
    RGBColor(86, 180, 233),
    RGBColor(213, 94, 0),
    RGBColor(240, 228, 66),
    RGBColor(100, 100, 100),
];

/// The colour of series number `i`.
fn colour(i: usize) -> RGBColor {
    COLOURS[i % COLOURS.len()]
}

/// An SVG that was drawn.
#[derive(Debug, Clone, PartialEq)]
pub struct Plot {
    /// File name inside the results directory.
    pub file: &'static str,
    /// The plot's title, also its image alt text.
    pub title: String,
}

/// The drawing area every plot draws on.
type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;

/// Draws every plot whose input exists and has something to show, into `dir`.
pub fn draw_all(results: &Results, stages: &[Stage], dir: &Path) -> Result<Vec<Plot>> {
    let mut drawn = Vec::new();
    if let Some(s) = &results.spouts {
        drawn.extend(draw(dir, "spouts-urls-per-second.svg", |area| {
            spouts::urls_per_second(area, s)
        })?);
        drawn.extend(draw(dir, "spouts-query-latency.svg", |area| {
            spouts::query_latency(area, s)
        })?);
        drawn.extend(draw(dir, "shard-skew.svg", |area| {
            shards::shard_skew(area, s)
        })?);
    }
    if let Some(s) = &results.scale_out {
        drawn.extend(draw(dir, "scale-out.svg", |area| {
            scale_out::pages_per_second(area, s)
        })?);
    }
    drawn.extend(draw(dir, "stage-ratios.svg", |area| {
        stages::stage_ratios(area, stages)
    })?);
    if let Some(b) = &results.browser {
        drawn.extend(draw(dir, "browser.svg", |area| {
            browser::pages_and_memory(area, b)
        })?);
    }
    if let Some(u) = &results.urlfrontier {
        drawn.extend(draw(dir, "urlfrontier.svg", |area| {
            urlfrontier::urls_per_second(area, u)
        })?);
    }
    Ok(drawn)
}

/// Draws one SVG with `f`, which returns the title, or `None` when there is
/// nothing to draw (then no file is written).
fn draw(
    dir: &Path,
    file: &'static str,
    f: impl FnOnce(&Area<'_>) -> Result<Option<String>>,
) -> Result<Option<Plot>> {
    let path = dir.join(file);
    let mut svg = String::new();
    let title = {
        let area = SVGBackend::with_string(&mut svg, SIZE).into_drawing_area();
        area.fill(&WHITE).map_err(plot_error)?;
        let title = f(&area).with_context(|| format!("drawing {}", path.display()))?;
        area.present().map_err(plot_error)?;
        title
    };
    let Some(title) = title else {
        return Ok(None);
    };
    std::fs::write(&path, svg).with_context(|| format!("writing {}", path.display()))?;
    Ok(Some(Plot { file, title }))
}

/// Formats a tick of a log axis: `0.05`, `20`, `1,000`.
fn log_tick(y: &f64) -> String {
    crate::format::setting(*y)
}

/// One series of bars: each at `(left edge, spread)`, `width` wide, from `lo` up to the median, in
/// `c`, with a black min–max whisker.
fn bars_with_whiskers<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    bars: &[(f64, crate::input::Spread)],
    width: f64,
    lo: f64,
    c: RGBColor,
) -> Result<()>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    chart
        .draw_series(
            bars.iter()
                .map(|(x0, s)| Rectangle::new([(*x0, lo), (*x0 + width, s.median)], c.filled())),
        )
        .map_err(plot_error)?;
    for (x0, s) in bars {
        let x = x0 + width / 2.0;
        let cap = width / 5.0;
        let (bottom, top) = (s.min.max(lo), s.max.max(lo));
        let whisker = [
            vec![(x, bottom), (x, top)],
            vec![(x - cap, bottom), (x + cap, bottom)],
            vec![(x - cap, top), (x + cap, top)],
        ];
        chart
            .draw_series(
                whisker
                    .into_iter()
                    .map(|p| PathElement::new(p, BLACK.stroke_width(1))),
            )
            .map_err(plot_error)?;
    }
    Ok(())
}

/// Turns a plotters error into an anyhow error.
fn plot_error<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("plotting failed: {e:?}")
}

/// A linear axis from 0 to n whose ticks sit at the centres `i + 0.5` of n
/// categories; category i spans `i..i + 1`.
struct Categories(usize);

impl Ranged for Categories {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let n = self.0.max(1) as f64;
        let span = f64::from(limit.1 - limit.0);
        limit.0 + (value / n * span).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            (0..self.0).map(|i| i as f64 + 0.5).collect()
        }
    }

    fn range(&self) -> Range<f64> {
        0.0..self.0 as f64
    }
}

/// Draws the title and the legend column at the right, sized to fit the
/// longest entry, and returns the area left for the chart.
fn layout<'a>(area: &Area<'a>, title: &str, entries: &[(Mark, String)]) -> Result<Area<'a>> {
    let body = area.titled(title, (FONT, TITLE_SIZE)).map_err(plot_error)?;
    let (w, _) = body.dim_in_pixel();
    let longest = entries
        .iter()
        .map(|(_, t)| t.chars().count())
        .max()
        .unwrap_or(0);
    // About 0.5 em per character at the rendered size, plus the mark.
    let text = (longest as f64 * f64::from(LABEL_SIZE) / 1.24 * 0.55).ceil() as u32;
    let legend_width = (60 + text).clamp(LEGEND_MIN_WIDTH, w / 3);
    let (chart, side) = body.split_horizontally(w.saturating_sub(legend_width));
    legend(&side, entries)?;
    Ok(chart)
}

/// What a legend entry shows before its text.
#[derive(Debug, Clone, Copy)]
enum Mark {
    /// A filled box, for bars.
    Bar(RGBColor),
    /// A solid line with a dot, for lines with markers.
    Line(RGBColor),
    /// A dashed line.
    Dashed(RGBColor),
    /// A short thick vertical tick.
    Tick(RGBColor),
}

/// Draws legend entries from the top of the legend column.
fn legend(area: &Area<'_>, entries: &[(Mark, String)]) -> Result<()> {
    let font =
        TextStyle::from((FONT, LABEL_SIZE).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (i, (mark, text)) in entries.iter().enumerate() {
        let y = 20 + 24 * i as i32;
        let (x0, x1) = (8, 34);
        match *mark {
            Mark::Bar(c) => area.draw(&Rectangle::new([(x0, y - 6), (x1, y + 6)], c.filled())),
            Mark::Line(c) => area
                .draw(&PathElement::new(vec![(x0, y), (x1, y)], c.stroke_width(2)))
                .and_then(|()| area.draw(&Circle::new(((x0 + x1) / 2, y), 4, c.filled()))),
            Mark::Dashed(c) => (0..3).try_for_each(|k| {
                let a = x0 + 10 * k;
                area.draw(&PathElement::new(
                    vec![(a, y), (a + 6, y)],
                    c.stroke_width(2),
                ))
            }),
            Mark::Tick(c) => area.draw(&PathElement::new(
                vec![((x0 + x1) / 2, y - 8), ((x0 + x1) / 2, y + 8)],
                c.stroke_width(3),
            )),
        }
        .map_err(plot_error)?;
        area.draw(&Text::new(text.clone(), (x1 + 8, y), font.clone()))
            .map_err(plot_error)?;
    }
    Ok(())
}

/// Bounds and tick values of a log axis covering the positive finite `values`,
/// extended to whole decades (with `headroom` more at the top); `None` if
/// there is no such value.
fn log_axis(values: impl IntoIterator<Item = f64>, headroom: f64) -> Option<(f64, f64, Vec<f64>)> {
    let (lo, hi) = values
        .into_iter()
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(None, |acc: Option<(f64, f64)>, v| match acc {
            None => Some((v, v)),
            Some((lo, hi)) => Some((lo.min(v), hi.max(v))),
        })?;
    // Decimal exponents of finite positive f64 values fit in an i32.
    let lo_exp = lo.log10().floor() as i32;
    let hi_exp = ((hi * headroom).log10().ceil() as i32).max(lo_exp + 1);
    let multiples: &[f64] = if hi_exp - lo_exp <= 2 {
        &[1.0, 2.0, 5.0]
    } else {
        &[1.0]
    };
    let mut ticks = Vec::new();
    for e in lo_exp..=hi_exp {
        for m in multiples {
            if e < hi_exp || *m == 1.0 {
                // Dividing by an exact power of ten keeps 0.05 printing as 0.05.
                ticks.push(if e < 0 {
                    m / 10f64.powi(-e)
                } else {
                    m * 10f64.powi(e)
                });
            }
        }
    }
    Some((10f64.powi(lo_exp), 10f64.powi(hi_exp), ticks))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn log_axis_skips_zero_and_missing() {
        assert_eq!(log_axis([0.0, f64::NAN, -1.0], 1.0), None);
        let (lo, hi, ticks) = log_axis([0.0, 15.0, 700.0], 1.0).unwrap_or_default();
        assert_eq!((lo, hi), (10.0, 1000.0));
        assert_eq!(ticks, vec![10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0]);
        let (lo, hi, ticks) = log_axis([3.0], 1.0).unwrap_or_default();
        assert_eq!((lo, hi), (1.0, 10.0));
        assert_eq!(ticks.len(), 4);
    }
}
