//! The HTTP methods of requests to the engine: the client's own, so that no type of the
//! `elasticsearch` crate (pinned to an alpha) appears in this crate's API.

/// An HTTP method of a request to the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    /// `GET`: read.
    Get,
    /// `PUT`: create or replace (an index, its settings, a document by id).
    Put,
    /// `POST`: searches, bulks, refreshes and other actions.
    Post,
    /// `DELETE`: remove (an index, a point in time, a scroll).
    Delete,
    /// `HEAD`: whether something exists.
    Head,
}

impl Method {
    /// The method's name as sent (`GET`, `PUT`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Put => "PUT",
            Method::Post => "POST",
            Method::Delete => "DELETE",
            Method::Head => "HEAD",
        }
    }

    /// The transport's method.
    pub(crate) fn to_transport(self) -> elasticsearch::http::Method {
        use elasticsearch::http::Method as Transport;
        match self {
            Method::Get => Transport::Get,
            Method::Put => Transport::Put,
            Method::Post => Transport::Post,
            Method::Delete => Transport::Delete,
            Method::Head => Transport::Head,
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
