//! The whole generated Markdown: the sections in order and the plot links.

use crate::machine::machine_section;
use crate::plots::Plot;
use crate::results::Results;
use crate::spouts::spouts_section;
use crate::stages::Stage;
use crate::stages::stages_section;

/// The Markdown report; image links are `link_prefix` followed by the file name.
pub fn report(results: &Results, stages: &[Stage], plots: &[Plot], link_prefix: &str) -> String {
    [
        machine_section(results.machine.as_ref()),
        spouts_section(results.spouts.as_ref()),
        crate::shared_crawl::section(results.shared_crawl.as_ref()),
        crate::scale_out::section(results.scale_out.as_ref()),
        crate::spouts::acceptance::section(results.spouts.as_ref(), results.shared_crawl.as_ref()),
        stages_section(stages),
        crate::one_host::section(results.one_host.as_ref()),
        crate::end_to_end::section(results.end_to_end.as_ref()),
        crate::as_given::section(results.as_given.as_ref(), results.end_to_end.as_ref()),
        crate::pace::section(results.pace.as_ref()),
        crate::browser::section(results.browser.as_ref()),
        crate::urlfrontier::section(results.urlfrontier.as_ref()),
        crate::urlfrontier_servers::section(results.urlfrontier_servers.as_ref()),
        crate::live_view::section(results.live_view.as_ref()),
        plots_section(plots, link_prefix),
    ]
    .join("\n")
}

/// "### Plots": one image link per SVG drawn.
fn plots_section(plots: &[Plot], link_prefix: &str) -> String {
    let mut out = String::from("### Plots\n\n");
    if plots.is_empty() {
        out.push_str("No plots: no results to draw in this run.\n");
    }
    for plot in plots {
        out.push_str(&format!(
            "![{}]({link_prefix}{})\n\n",
            plot.title.replace(['[', ']'], ""),
            plot.file
        ));
    }
    while out.ends_with("\n\n") {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn links_use_the_prefix() {
        let plots = [Plot {
            file: "spouts-urls-per-second.svg",
            title: "URLs".to_string(),
        }];
        let md = report(&Results::default(), &[], &plots, "benches/results/");
        assert!(md.contains("### Machine"));
        assert!(
            md.ends_with("![URLs](benches/results/spouts-urls-per-second.svg)\n"),
            "{md}"
        );
    }
}
