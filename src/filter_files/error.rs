//! Why a StormCrawler filter file could not be used.

/// Why a StormCrawler filter file (or a rule file it names) could not be used. Each variant names
/// the file, and the class, parameter or line at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FilterFileError {
    /// The file is nowhere it is looked for.
    #[error("{what}: cannot find `{name}` (looked for {looked})")]
    NotFound {
        /// What names the file: a config key, or a file and class.
        what: String,
        /// The file name as given.
        name: String,
        /// The paths tried, in order.
        looked: String,
    },
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// The I/O error.
        #[source]
        source: std::io::Error,
    },
    /// The file holds more than a file of its kind may ([`crate::bounded_file`]).
    #[error(transparent)]
    TooLarge(crate::bounded_file::BoundedFileError),
    /// The file is not JSON, or not the shape of a filter file.
    #[error("{path}: {message}")]
    Malformed {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
    /// The file names a class that squall does not implement (or not in this kind of file).
    #[error(
        "{path}: filter class `{class}` is not supported in a {chain} file (supported: {supported})"
    )]
    UnsupportedClass {
        /// The file.
        path: String,
        /// The class as written.
        class: String,
        /// The kind of file (`urlfilters.json`, `parsefilters.json`, `jsoupfilters.json`).
        chain: &'static str,
        /// The classes squall supports there.
        supported: String,
    },
    /// A parameter of a filter is unknown or has a bad value.
    #[error("{path}: {class}: param `{param}` {message}")]
    BadParam {
        /// The file.
        path: String,
        /// The filter's class.
        class: String,
        /// The parameter.
        param: String,
        /// What is wrong.
        message: String,
    },
    /// A rule of a rule file (regex filters or normalizers) is invalid.
    #[error("{path}: {location}: {message}")]
    BadRule {
        /// The rule file.
        path: String,
        /// Where in it: `line 3`, `rule 2`.
        location: String,
        /// What is wrong.
        message: String,
    },
}

crate::bounded_file::from_bounded_file_error!(FilterFileError);
