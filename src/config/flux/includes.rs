//! Reading a flux with its includes, merged as Flux merges them, each file read once.
//!
//! A file included many times (includes that form a diamond: nine files each including the next
//! ten times make 10^8 paths) is read, substituted and parsed once, and what its includes make is
//! worked out once per path it is named by; the merged result holds each file's configuration
//! once, so the result is the one the repeated reads would give, at the cost of one. What a read
//! may take is bounded too ([`MAX_FILE_BYTES`], [`MAX_TOTAL_BYTES`], [`MAX_INCLUDES`]), each a
//! named refusal.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::FluxError;
use super::document::{Component, ConfigLayer, Document, Include, Merged, Source};
use super::plan::{Item, LayerRef, Plan};
use super::substitute::Substitutions;
use crate::config::builder::non_string_key;

/// StormCrawler core's defaults, which a flux includes from the topology jar: squall's own
/// defaults stand for them.
pub const CORE_DEFAULTS: &str = "crawler-default.yaml";

/// The most bytes squall reads of one flux or included file (StormCrawler's own are a few KB).
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The most bytes of all the files one flux reads, each counted once.
pub const MAX_TOTAL_BYTES: u64 = 8 << 20;

/// The most includes followed in one read of a flux, counting every time a file is included.
pub const MAX_INCLUDES: usize = 256;

/// How deep includes may nest (a file including itself would never end).
const MAX_DEPTH: usize = 8;

/// Reads `path` and its includes, as Flux does: each file's placeholders substituted, then its
/// includes merged in order (an `override: true` include's values replace those read before; an
/// `override: false` one only fills what is missing), components by id the same way. Unlike
/// Flux, an included file's own includes are read too.
pub fn read(path: &Path, substitutions: &Substitutions) -> Result<Merged, FluxError> {
    let mut reader = Reader {
        substitutions,
        files: Vec::new(),
        by_canonical: HashMap::new(),
        plans: HashMap::new(),
        open: Vec::new(),
        includes: 0,
        bytes: 0,
    };
    let plan = reader.plan(path, 0)?;
    Ok(reader.materialize(&plan))
}

/// One file, read, substituted and parsed.
struct File {
    source: Source,
    document: Document,
}

/// One read of a flux: the files read so far, and what each path's includes make.
struct Reader<'a> {
    substitutions: &'a Substitutions,
    files: Vec<File>,
    /// A file's index in `files`, by its canonical path.
    by_canonical: HashMap<PathBuf, usize>,
    /// What a file and its includes make, by the path it was named by (its includes are found
    /// from that path's directory).
    plans: HashMap<PathBuf, Plan>,
    /// The paths being read, outermost first (one named again is a cycle).
    open: Vec<PathBuf>,
    /// Includes followed so far.
    includes: usize,
    /// Bytes of the files read so far.
    bytes: u64,
}

impl Reader<'_> {
    /// What the file at `path` and its includes make.
    fn plan(&mut self, path: &Path, depth: usize) -> Result<Plan, FluxError> {
        if let Some(plan) = self.plans.get(path) {
            return Ok(plan.clone());
        }
        let display = path.display().to_string();
        if self.open.iter().any(|open| open == path) {
            let chain: Vec<String> = self.open.iter().map(|p| p.display().to_string()).collect();
            return Err(FluxError::Include {
                path: display.clone(),
                message: format!(
                    "includes itself, by way of {} → {display}",
                    chain.join(" → ")
                ),
            });
        }
        if depth > MAX_DEPTH {
            return Err(FluxError::Include {
                path: display,
                message: format!(
                    "includes nest more than {MAX_DEPTH} deep (a file including itself?)"
                ),
            });
        }
        let file = self.file(path)?;
        self.open.push(path.to_path_buf());
        let mut plan = Plan::own(file, path, &self.files[file].document);
        let includes = self.files[file].document.includes.clone();
        for include in &includes {
            self.includes += 1;
            if self.includes > MAX_INCLUDES {
                return Err(FluxError::Bound {
                    path: display,
                    bound: "includes followed in one read",
                    limit: MAX_INCLUDES as u64,
                    hint: "includes that fan out, a file included many times over?",
                });
            }
            let included = self.include(path, include, depth)?;
            plan.merge(included, include.overrides, |list, item| {
                self.id(list, item)
            });
        }
        self.open.pop();
        self.plans.insert(path.to_path_buf(), plan.clone());
        Ok(plan)
    }

    /// One include's plan; a resource is StormCrawler's defaults or an error naming it.
    fn include(&mut self, from: &Path, include: &Include, depth: usize) -> Result<Plan, FluxError> {
        if include.resource {
            if include.file.trim_start_matches('/') == CORE_DEFAULTS {
                return Ok(Plan {
                    defaults_included: true,
                    ..Plan::default()
                });
            }
            return Err(FluxError::Include {
                path: from.display().to_string(),
                message: format!(
                    "resource {} is inside a Java topology jar, which squall has not: give it as \
                     a file (resource: false)",
                    include.file
                ),
            });
        }
        self.plan(&include_path(from, &include.file), depth + 1)
    }

    /// The index of the file at `path`, read and parsed the first time it is named.
    fn file(&mut self, path: &Path) -> Result<usize, FluxError> {
        let display = path.display().to_string();
        let unreadable = |source| FluxError::Read {
            path: display.clone(),
            source,
        };
        let canonical = std::fs::canonicalize(path).map_err(unreadable)?;
        if let Some(&at) = self.by_canonical.get(&canonical) {
            return Ok(at);
        }
        let raw = read_bounded(path)?;
        self.bytes += raw.len() as u64;
        if self.bytes > MAX_TOTAL_BYTES {
            return Err(FluxError::Bound {
                path: display,
                bound: "bytes of all the files one flux reads",
                limit: MAX_TOTAL_BYTES,
                hint: "a flux and its includes are small files",
            });
        }
        let text = self.substitutions.apply(path, &raw)?;
        let document = parse(&display, &text)?;
        if !document.components.is_empty() {
            return Err(FluxError::Unsupported {
                path: display,
                line: super::substitute::line_of(&text, "components:"),
                what: "`components`: none of the classes squall maps takes one".to_string(),
            });
        }
        let source = Source {
            path: path.to_path_buf(),
            text: text.into(),
        };
        self.files.push(File { source, document });
        self.by_canonical.insert(canonical, self.files.len() - 1);
        Ok(self.files.len() - 1)
    }

    /// The id of the spout (`list` 0) or bolt (`list` 1) an item names.
    fn id(&self, list: usize, (file, at): Item) -> &str {
        let document = &self.files[file].document;
        match list {
            0 => &document.spouts[at].id,
            _ => &document.bolts[at].id,
        }
    }

    /// The merged result a plan stands for, each file's parts cloned once.
    fn materialize(&self, plan: &Plan) -> Merged {
        let layer = |layer: &LayerRef| ConfigLayer {
            path: layer.path.clone(),
            config: match layer.real {
                true => self.files[layer.file].document.config.clone(),
                false => None,
            }
            .unwrap_or_default(),
        };
        let part = |items: &[Item], pick: fn(&Document) -> &Vec<Component>| {
            let part = |&(file, at): &Item| {
                let file = &self.files[file];
                (pick(&file.document)[at].clone(), file.source.clone())
            };
            items.iter().map(part).collect()
        };
        Merged {
            layers: plan.layers.iter().map(layer).collect(),
            spouts: part(&plan.spouts, |d| &d.spouts),
            bolts: part(&plan.bolts, |d| &d.bolts),
            streams: plan
                .streams
                .iter()
                .map(|&(file, at)| {
                    let file = &self.files[file];
                    (file.document.streams[at].clone(), file.source.clone())
                })
                .collect(),
            name: plan.name.and_then(|f| self.files[f].document.name.clone()),
            defaults_included: plan.defaults_included,
        }
    }
}

/// A flux file's text, read; an error names the file and the line.
fn parse(path: &str, text: &str) -> Result<Document, FluxError> {
    let syntax = |(line, message)| FluxError::Syntax {
        path: path.to_string(),
        line,
        message,
    };
    let document: Document = serde_norway::from_str(text)
        .map_err(|error| syntax(crate::config::yaml_error::locate(&error, text)))?;
    let config = document.config.as_ref();
    if let Some((line, key)) = config.and_then(|c| non_string_key(c, text)) {
        return Err(syntax((line, format!("config key {key} is not a string"))));
    }
    Ok(document)
}

/// The text of the file at `path`, refused when it is over [`MAX_FILE_BYTES`] (read no further:
/// `/dev/zero` ends too).
fn read_bounded(path: &Path) -> Result<String, FluxError> {
    let display = path.display().to_string();
    let unreadable = |source| FluxError::Read {
        path: display.clone(),
        source,
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(FluxError::Bound {
            path: display,
            bound: "bytes of one flux or included file",
            limit: MAX_FILE_BYTES,
            hint: "a flux and its includes are small files",
        });
    }
    String::from_utf8(bytes)
        .map_err(|error| unreadable(std::io::Error::new(std::io::ErrorKind::InvalidData, error)))
}

/// Where an included file is: as Flux finds it, from the working directory; failing that, beside
/// the file that includes it.
fn include_path(from: &Path, file: &str) -> PathBuf {
    let given = PathBuf::from(file);
    if given.is_absolute() || given.exists() {
        return given;
    }
    match from.parent() {
        Some(dir) => dir.join(file),
        None => given,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::ConfigBuilder;
    use crate::config::flux::FluxTopology;

    const SPOUT: &str = "spouts:\n  - id: seeds\n    \
        className: org.apache.stormcrawler.spout.FileSpout\n    \
        constructorArgs: [\".\", \"seeds.txt\"]\n";

    fn include(file: &str, overrides: bool) -> String {
        format!("  - resource: false\n    file: {file}\n    override: {overrides}\n")
    }

    /// The agent name the flux at `path` gives.
    fn agent_name(path: &Path) -> Result<String, FluxError> {
        let topology = FluxTopology::load(
            path,
            &Substitutions::default(),
            &crate::config::Frontiers::new(),
        )?;
        let config = topology.apply(ConfigBuilder::new())?.build()?;
        Ok(config.agent.name)
    }

    #[test]
    fn includes_that_form_a_diamond_are_read_once_each() {
        let dir = tempfile::tempdir().expect("temp dir");
        for level in 1..=9 {
            let mut text = if level == 1 {
                SPOUT.to_string()
            } else {
                String::new()
            };
            if level < 9 {
                text.push_str("includes:\n");
                let next = format!("level{}.flux", level + 1);
                text.push_str(&include(&next, true).repeat(10));
            }
            text.push_str(&format!("config:\n  http.agent.name: level{level}\n"));
            std::fs::write(dir.path().join(format!("level{level}.flux")), text).expect("write");
        }
        let top = dir.path().join("level1.flux");
        let merged = read(&top, &Substitutions::default()).expect("read");
        assert_eq!(merged.layers.len(), 9, "{:?}", merged.layers);
        assert_eq!(agent_name(&top).expect("load"), "level9");
    }

    #[test]
    fn a_file_included_twice_gives_what_flux_gives() {
        let dir = tempfile::tempdir().expect("temp dir");
        let write = |name: &str, text: String| {
            std::fs::write(dir.path().join(name), text).expect("write");
        };
        let agent = |name: &str| format!("config:\n  http.agent.name: {name}\n");
        write("b.yaml", agent("b"));
        write("c.yaml", agent("c"));
        // b below a, c above both, then b above all: b's value is the last one set.
        let includes = [("b.yaml", false), ("c.yaml", true), ("b.yaml", true)];
        let list: String = includes.iter().map(|(f, o)| include(f, *o)).collect();
        write("a.flux", format!("{SPOUT}includes:\n{list}{}", agent("a")));
        assert_eq!(agent_name(&dir.path().join("a.flux")).expect("load"), "b");
        // Without the last include, c's is; with b twice below a, a's is.
        let list: String = includes[..2].iter().map(|(f, o)| include(f, *o)).collect();
        write("a.flux", format!("{SPOUT}includes:\n{list}{}", agent("a")));
        assert_eq!(agent_name(&dir.path().join("a.flux")).expect("load"), "c");
        let list = include("b.yaml", false).repeat(2);
        write("a.flux", format!("{SPOUT}includes:\n{list}{}", agent("a")));
        assert_eq!(agent_name(&dir.path().join("a.flux")).expect("load"), "a");
    }

    #[test]
    fn each_bound_is_named_with_its_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let flux = dir.path().join("a.flux");
        let refused = |text: String| {
            std::fs::write(&flux, text).expect("write");
            read(&flux, &Substitutions::default())
                .expect_err("refused")
                .to_string()
        };
        std::fs::write(dir.path().join("b.yaml"), "config: {}\n").expect("write");
        let many = include("b.yaml", true).repeat(MAX_INCLUDES + 1);
        let error = refused(format!("includes:\n{many}"));
        assert!(
            error.contains("a.flux: over the bound on includes followed"),
            "{error}"
        );
        let error = refused(format!("includes:\n{}", include("/dev/zero", true)));
        assert!(
            error.contains("/dev/zero: over the bound on bytes of one"),
            "{error}"
        );
        let big = format!("name: {}\n", "x".repeat(MAX_FILE_BYTES as usize));
        let error = refused(big);
        assert!(
            error.contains("a.flux: over the bound on bytes of one"),
            "{error}"
        );
    }

    #[test]
    fn a_file_including_itself_is_named_with_the_chain() {
        let dir = tempfile::tempdir().expect("temp dir");
        let a = dir.path().join("a.flux");
        std::fs::write(&a, format!("includes:\n{}", include("b.flux", true))).expect("write");
        let b = format!("includes:\n{}", include("a.flux", true));
        std::fs::write(dir.path().join("b.flux"), b).expect("write");
        let error = read(&a, &Substitutions::default()).expect_err("a cycle");
        let message = error.to_string();
        assert!(message.contains("includes itself, by way of"), "{message}");
        assert!(message.contains("b.flux →"), "{message}");
    }
}
