//! What a flux file and its includes make, as references to the files read: small, whatever the
//! files hold, so that a file included many times costs its references, never copies.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::document::Document;

/// A spout, bolt or stream: its file's index, and its place in the file's list.
pub type Item = (usize, usize);

/// One configuration layer: a file's keys, as the path it was named by.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerRef {
    /// The file's index.
    pub file: usize,
    /// The path it was named by (its directory joins the configuration's directories).
    pub path: PathBuf,
    /// Whether its keys apply (`false`: a layer above holds the same keys; this one stays, with
    /// no keys, only to keep its directory's place among the configuration's directories).
    pub real: bool,
}

/// A file and its includes, merged as Flux merges them.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// Configuration layers, lowest first, each path's keys once (at its highest place).
    pub layers: Vec<LayerRef>,
    /// Spouts.
    pub spouts: Vec<Item>,
    /// Bolts.
    pub bolts: Vec<Item>,
    /// Streams, each once.
    pub streams: Vec<Item>,
    /// The file whose name is the first given.
    pub name: Option<usize>,
    /// Whether StormCrawler's defaults were included.
    pub defaults_included: bool,
}

impl Plan {
    /// What the file `file`, named by `path`, holds itself.
    pub fn own(file: usize, path: &Path, document: &Document) -> Self {
        let items = |len: usize| (0..len).map(|at| (file, at)).collect();
        Plan {
            layers: vec![LayerRef {
                file,
                path: path.to_path_buf(),
                real: true,
            }],
            spouts: items(document.spouts.len()),
            bolts: items(document.bolts.len()),
            streams: items(document.streams.len()),
            name: document.name.is_some().then_some(file),
            defaults_included: false,
        }
    }

    /// Merges `included` into this plan: overriding layers go above everything read so far, the
    /// others below; components are added by id (`id(0, item)` a spout's, `id(1, item)` a
    /// bolt's), an overriding include's replacing those of the same id; streams are added.
    pub fn merge<'f>(
        &mut self,
        included: Plan,
        overrides: bool,
        id: impl Fn(usize, Item) -> &'f str,
    ) {
        let mut layers = included.layers;
        if overrides {
            layers = std::mem::take(&mut self.layers)
                .into_iter()
                .chain(layers)
                .collect();
        } else {
            layers.append(&mut self.layers);
        }
        self.layers = once_each(layers);
        merge_components(&mut self.spouts, included.spouts, overrides, |item| {
            id(0, item)
        });
        merge_components(&mut self.bolts, included.bolts, overrides, |item| {
            id(1, item)
        });
        let known: HashSet<Item> = self.streams.iter().copied().collect();
        let new = included.streams.into_iter().filter(|s| !known.contains(s));
        self.streams.extend(new);
        self.defaults_included |= included.defaults_included;
        if self.name.is_none() {
            self.name = included.name;
        }
    }
}

/// `layers` applied as they are give what they would have given with every path's keys kept at
/// its highest place only, and every other place of a path whose directory is first there kept
/// without keys (so that the configuration's directories come in the same order).
fn once_each(layers: Vec<LayerRef>) -> Vec<LayerRef> {
    let mut highest: HashMap<&Path, usize> = HashMap::new();
    for (at, layer) in layers.iter().enumerate().filter(|(_, l)| l.real) {
        highest.insert(&layer.path, at);
    }
    let mut dirs_seen = HashSet::new();
    let mut keep = Vec::new();
    for (at, layer) in layers.iter().enumerate() {
        let first_of_dir = dirs_seen.insert(layer.path.parent().map(Path::to_path_buf));
        let real = layer.real && highest.get(layer.path.as_path()) == Some(&at);
        if real || first_of_dir {
            keep.push(LayerRef {
                real,
                ..layer.clone()
            });
        }
    }
    keep
}

/// Adds `more` to `list` by id: a component of an id already there replaces it when `overrides`,
/// else is dropped; one of a new id is added.
fn merge_components<'f>(
    list: &mut Vec<Item>,
    more: Vec<Item>,
    overrides: bool,
    id: impl Fn(Item) -> &'f str,
) {
    let mut at: HashMap<&str, usize> = HashMap::new();
    for (place, &item) in list.iter().enumerate() {
        at.entry(id(item)).or_insert(place);
    }
    for item in more {
        match at.get(id(item)) {
            Some(&place) if overrides => list[place] = item,
            Some(_) => {}
            None => {
                at.insert(id(item), list.len());
                list.push(item);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(file: usize, path: &str, real: bool) -> LayerRef {
        LayerRef {
            file,
            path: PathBuf::from(path),
            real,
        }
    }

    #[test]
    fn a_path_s_keys_stay_at_its_highest_place_and_directories_keep_their_order() {
        let layers = vec![
            layer(1, "x/b.yaml", true),
            layer(0, "y/a.yaml", true),
            layer(2, "y/c.yaml", true),
            layer(1, "x/b.yaml", true),
            layer(2, "y/c.yaml", false),
        ];
        assert_eq!(
            once_each(layers),
            vec![
                layer(1, "x/b.yaml", false),
                layer(0, "y/a.yaml", true),
                layer(2, "y/c.yaml", true),
                layer(1, "x/b.yaml", true),
            ]
        );
    }
}
