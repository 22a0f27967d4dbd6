//! Parsing a page into a DOM (html5ever, through `scraper`) with a bound on how deep elements nest.
//!
//! html5ever's tree builder takes time quadratic in the nesting depth, and caps it nowhere: half a
//! megabyte of `<div>`s takes it minutes. Browsers stop nesting at 512 levels; here, parsing stops
//! where an element would sit deeper than that, and the rules see the page up to there (give or
//! take the [`CHUNK`] being parsed at that point).

use std::borrow::Cow;
use std::cell::Cell;
use std::rc::Rc;

use ego_tree::NodeId;
use html5ever::tendril::{StrTendril, TendrilSink};
use html5ever::tree_builder::{ElementFlags, NodeOrText, QuirksMode, TreeSink};
use html5ever::{Attribute, QualName};
use scraper::{Html, HtmlTreeSink};

/// How deep elements may nest (the depth of the root `<html>` element is 1).
pub(super) const MAX_DEPTH: usize = 512;

/// Bytes handed to the parser at a time, between checks of the depth.
const CHUNK: usize = 4096;

/// Parses `text` as an HTML document, up to where elements nest deeper than [`MAX_DEPTH`].
pub(super) fn parse_html(text: &str) -> Html {
    let too_deep = Rc::new(Cell::new(false));
    let sink = DepthGuard {
        inner: HtmlTreeSink::new(Html::new_document()),
        too_deep: Rc::clone(&too_deep),
    };
    let mut parser = html5ever::parse_document(sink, Default::default());
    let mut rest = text;
    while !rest.is_empty() && !too_deep.get() {
        let mut end = rest.len().min(CHUNK);
        while !rest.is_char_boundary(end) {
            end += 1;
        }
        let (chunk, after) = rest.split_at(end);
        parser.process(StrTendril::from_slice(chunk));
        rest = after;
    }
    if too_deep.get() {
        tracing::debug!("elements nest deeper than {MAX_DEPTH}: the rest of the page is not read");
    }
    parser.finish()
}

/// scraper's tree sink, watching the depth at which elements are inserted.
struct DepthGuard {
    inner: HtmlTreeSink,
    too_deep: Rc<Cell<bool>>,
}

impl DepthGuard {
    /// How deep `node` is: its ancestors, the document node included (so `<html>` is at 1),
    /// counted up to one past the limit.
    fn depth(&self, node: &NodeId) -> usize {
        let html = self.inner.0.borrow();
        html.tree
            .get(*node)
            .map_or(0, |node| node.ancestors().take(MAX_DEPTH + 1).count())
    }

    /// Notes that `child`, when it is an element, goes in at `depth`.
    fn inserting(&self, depth: usize, child: &NodeOrText<NodeId>) {
        if depth > MAX_DEPTH && matches!(child, NodeOrText::AppendNode(_)) {
            self.too_deep.set(true);
        }
    }
}

impl TreeSink for DepthGuard {
    type Output = Html;
    type Handle = NodeId;
    type ElemName<'a>
        = <HtmlTreeSink as TreeSink>::ElemName<'a>
    where
        Self: 'a;

    fn finish(self) -> Html {
        self.inner.finish()
    }

    fn parse_error(&self, msg: Cow<'static, str>) {
        self.inner.parse_error(msg);
    }

    fn get_document(&self) -> NodeId {
        self.inner.get_document()
    }

    fn elem_name<'a>(&'a self, target: &'a NodeId) -> Self::ElemName<'a> {
        self.inner.elem_name(target)
    }

    fn create_element(&self, name: QualName, attrs: Vec<Attribute>, flags: ElementFlags) -> NodeId {
        self.inner.create_element(name, attrs, flags)
    }

    fn create_comment(&self, text: StrTendril) -> NodeId {
        self.inner.create_comment(text)
    }

    fn create_pi(&self, target: StrTendril, data: StrTendril) -> NodeId {
        self.inner.create_pi(target, data)
    }

    fn append(&self, parent: &NodeId, child: NodeOrText<NodeId>) {
        self.inserting(self.depth(parent) + 1, &child);
        self.inner.append(parent, child);
    }

    fn append_based_on_parent_node(
        &self,
        element: &NodeId,
        prev_element: &NodeId,
        child: NodeOrText<NodeId>,
    ) {
        // Before `element` when it has a parent, else in `prev_element`: at most this deep.
        self.inserting(self.depth(prev_element) + 1, &child);
        self.inner
            .append_based_on_parent_node(element, prev_element, child);
    }

    fn append_doctype_to_document(
        &self,
        name: StrTendril,
        public_id: StrTendril,
        system_id: StrTendril,
    ) {
        self.inner
            .append_doctype_to_document(name, public_id, system_id);
    }

    fn mark_script_already_started(&self, node: &NodeId) {
        self.inner.mark_script_already_started(node);
    }

    fn get_template_contents(&self, target: &NodeId) -> NodeId {
        self.inner.get_template_contents(target)
    }

    fn same_node(&self, x: &NodeId, y: &NodeId) -> bool {
        self.inner.same_node(x, y)
    }

    fn set_quirks_mode(&self, mode: QuirksMode) {
        self.inner.set_quirks_mode(mode);
    }

    fn append_before_sibling(&self, sibling: &NodeId, new_node: NodeOrText<NodeId>) {
        self.inserting(self.depth(sibling), &new_node);
        self.inner.append_before_sibling(sibling, new_node);
    }

    fn add_attrs_if_missing(&self, target: &NodeId, attrs: Vec<Attribute>) {
        self.inner.add_attrs_if_missing(target, attrs);
    }

    fn remove_from_parent(&self, target: &NodeId) {
        self.inner.remove_from_parent(target);
    }

    fn reparent_children(&self, node: &NodeId, new_parent: &NodeId) {
        self.inner.reparent_children(node, new_parent);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The depth of the deepest element.
    fn depth(html: &Html) -> usize {
        html.tree
            .nodes()
            .filter(|node| node.value().is_element())
            .map(|node| node.ancestors().count())
            .max()
            .unwrap_or(0)
    }

    #[test]
    fn pages_parse_whole_in_chunks() {
        let text = format!("<p>{}</p><p id=last>é</p>", "déjà vu ".repeat(2000));
        let html = parse_html(&text);
        let last = scraper::Selector::parse("#last").expect("selector");
        let found: Vec<_> = html.select(&last).flat_map(|p| p.text()).collect();
        assert_eq!(found, ["é"]);
    }

    #[test]
    fn parsing_stops_where_elements_nest_too_deep() {
        let nested = |n: usize| format!("{}x{}", "<div>".repeat(n), "</div>".repeat(n));
        // html, body, then the divs.
        assert_eq!(depth(&parse_html(&nested(MAX_DEPTH - 2))), MAX_DEPTH);
        let started = std::time::Instant::now();
        let deep = parse_html(&nested(200_000));
        assert!(depth(&deep) < MAX_DEPTH + CHUNK, "{}", depth(&deep));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "{:?}",
            started.elapsed()
        );
    }
}
