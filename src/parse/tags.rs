//! Which of the elements the extractor watches a page can hold at all: an element opens with `<`
//! and its name, so a name that never follows a `<` in the page's bytes needs no handler.
//!
//! Every encoding the extractor reads is ASCII-compatible and no multi-byte character holds the
//! byte `<`, so the bytes tell it. The answer may say yes for a name the page does not open (`<a`
//! also starts `<abbr`; a `<title` may stand in a script), never no for one it does.

/// A watched element, by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Tag {
    A,
    Area,
    Link,
    Frame,
    Iframe,
    Base,
    Meta,
    Title,
    Noscript,
}

impl Tag {
    const ALL: [Tag; 9] = [
        Tag::A,
        Tag::Area,
        Tag::Link,
        Tag::Frame,
        Tag::Iframe,
        Tag::Base,
        Tag::Meta,
        Tag::Title,
        Tag::Noscript,
    ];

    /// The element's name.
    pub(super) fn name(self) -> &'static str {
        match self {
            Tag::A => "a",
            Tag::Area => "area",
            Tag::Link => "link",
            Tag::Frame => "frame",
            Tag::Iframe => "iframe",
            Tag::Base => "base",
            Tag::Meta => "meta",
            Tag::Title => "title",
            Tag::Noscript => "noscript",
        }
    }

    fn bit(self) -> u16 {
        1 << self as u16
    }
}

/// The watched elements whose name follows a `<` somewhere in a page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Opened(u16);

impl Opened {
    /// Every watched element.
    pub(super) const ALL: Opened = Opened((1 << Tag::ALL.len()) - 1);

    /// The watched elements `html` may open.
    pub(super) fn scan(html: &[u8]) -> Opened {
        let mut opened = 0;
        for at in memchr::memchr_iter(b'<', html) {
            let after = html.get(at + 1..).unwrap_or_default();
            let candidates: &[Tag] = match after.first().map(u8::to_ascii_lowercase) {
                Some(b'a') => &[Tag::A, Tag::Area],
                Some(b'l') => &[Tag::Link],
                Some(b'f') => &[Tag::Frame],
                Some(b'i') => &[Tag::Iframe],
                Some(b'b') => &[Tag::Base],
                Some(b'm') => &[Tag::Meta],
                Some(b't') => &[Tag::Title],
                Some(b'n') => &[Tag::Noscript],
                _ => continue,
            };
            for &tag in candidates {
                if opened & tag.bit() != 0 {
                    continue;
                }
                let name = tag.name().as_bytes();
                if after
                    .get(..name.len())
                    .is_some_and(|start| start.eq_ignore_ascii_case(name))
                {
                    opened |= tag.bit();
                }
            }
            if opened == Opened::ALL.0 {
                break;
            }
        }
        Opened(opened)
    }

    /// Whether `tag` may be opened.
    pub(super) fn has(self, tag: Tag) -> bool {
        self.0 & tag.bit() != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(opened: Opened) -> Vec<&'static str> {
        Tag::ALL
            .into_iter()
            .filter(|tag| opened.has(*tag))
            .map(Tag::name)
            .collect()
    }

    #[test]
    fn finds_the_names_that_follow_a_less_than_sign() {
        let html = b"<HTML><Title>t</title><a href=x>a, frame, base</a><IFRAME src=y><metadata>";
        assert_eq!(names(Opened::scan(html)), ["a", "iframe", "meta", "title"]);
        assert_eq!(
            names(Opened::scan(b"no markup at all, area")),
            Vec::<&str>::new()
        );
        assert_eq!(names(Opened::scan(b"ends with <")), Vec::<&str>::new());
        assert_eq!(names(Opened::scan(b"<noscript")), ["noscript"]);
        assert_eq!(
            Opened::scan(b"<a<area<link<frame<iframe<base<meta<title<noscript"),
            Opened::ALL
        );
        for tag in Tag::ALL {
            let upper = format!("x<{}>", tag.name().to_ascii_uppercase());
            assert_eq!(
                names(Opened::scan(upper.as_bytes())).last(),
                Some(&tag.name())
            );
        }
    }
}
