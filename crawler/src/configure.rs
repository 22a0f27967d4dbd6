//! The crawl's configuration from the command line, in the order its sources apply: the demo's
//! keys, the flux (`--flux`, `--flux-filter`), the YAML files (`--config`), the shorthand flags, and
//! last the overrides (`--set`).

use squall::config::flux::{FluxTopology, Substitutions};
use squall::config::{ConfigBuilder, CrawlConfig};

use crate::args::Args;
use crate::demo;
use crate::open::frontiers;

/// The flux of `--flux`, read with `--flux-filter`'s properties; what squall does differently
/// from its classes is printed, a line each.
pub(crate) fn load_flux(args: &Args) -> anyhow::Result<Option<FluxTopology>> {
    let Some(path) = &args.flux else {
        return Ok(None);
    };
    let substitutions = match &args.flux_filter {
        Some(file) => Substitutions::from_properties_file(file)?,
        None => Substitutions::default(),
    };
    let flux = FluxTopology::load(path, &substitutions, &frontiers())?;
    eprintln!("flux: topology {:?} from {}", flux.name, path.display());
    for note in &flux.notes {
        eprintln!("flux: {note}");
    }
    Ok(Some(flux))
}

/// The configuration `args` (and the flux they name, already loaded) make, checked.
pub(crate) fn crawl_config(
    args: &Args,
    flux: Option<&FluxTopology>,
) -> anyhow::Result<CrawlConfig> {
    // The keys of the frontier kinds this binary opens, and the browser's.
    let mut builder = ConfigBuilder::new()
        .frontiers(&frontiers())
        .extension_prefixes(&[squall_browser::PREFIX]);
    if args.demo_site {
        builder = demo::configure(builder)?;
    }
    if let Some(flux) = flux {
        builder = flux.apply(builder)?;
    }
    for path in &args.config {
        builder = builder.yaml_file(path)?;
    }
    for (key, value, text) in args.shorthand_keys() {
        builder = if text {
            builder.set_text(key, value)?
        } else {
            builder.set(&format!("{key}={value}"))?
        };
    }
    if args.warc_dir.is_some() {
        builder = builder.set("warc.enabled=true")?;
    }
    for assignment in &args.overrides {
        builder = builder.set(assignment)?;
    }
    Ok(builder.build()?)
}
