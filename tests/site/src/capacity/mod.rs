//! A site that pushes back: hosts `cap-000.test`, ... each with a hidden capacity, for testing
//! and measuring a crawler that paces each host by what it answers.
//!
//! Each host ([`HostCapacity`]) sits behind a [`TokenBucket`] of `rate` requests/s and `burst`
//! tokens. Its [`HostGate`] answers each request:
//!
//! - inside a Retry-After window the host announced: the same refusal again (its `Retry-After`
//!   the rest of the window), no token taken;
//! - with a token: the page, after its unloaded time (the host's, spread over its pages by path
//!   from `1/√spread` to `√spread` times it) multiplied by the load: flat up to `knee` of the
//!   capacity, `1 + growth·((ρ − knee)/(1 − knee))²` past it, `ρ` the larger of the arrival rate
//!   over the last few seconds over the capacity ([`LoadMeter`]) and the share of the bucket used
//!   (a warning before the first refusal);
//! - else its [`OverCapacity`] answer: 429 without a header, 429 or 503 with `Retry-After`, or
//!   503 without, by host. Refusals take no token.
//!
//! `/robots.txt` answers 404 at once and takes no token; the judge leaves it out. Pages are
//! rendered per request: `/` and `/p/N.html` ([`render`]), page N linking to N+1 and to
//! `(7N+k) mod P` on its host ([`links_of`]), so discovery always outruns fetching.
//!
//! [`CapacitySite::start`] serves every host from one listener on `127.0.0.1:0`, choosing the
//! host by the `Host` header, as the crate's other sites do. URLs carry the port
//! (`http://cap-007.test:PORT/p/3.html`): a crawler must resolve every name of
//! [`CapacitySite::host_names`] to [`CapacitySite::addr`]. Its log, [`CapacitySite::records`],
//! keeps each request with its answer ([`CapacityRecord`]), logged on arrival.
//!
//! Its log is the judge: [`judge`] reads from it the figures a pacing crawl is held to (useful
//! pages/s in a window against `Σ min(capacity, 1/floor)` and `Σ min(capacity, 1/(floor +
//! unloaded))`, the refused share, requests inside a Retry-After window, same-host gaps under the
//! floor, each host's p95 of what its load multiplied its pages' times by), and [`first_minute`]
//! the restart bar: no host asked after a restart more often than the pace its requests showed
//! before ([`paces_before`]) allows.
//! [`CapacitySpec::ladder`] is the benchmark's site: `ladder(200, 0.2, 20.0, 400.0, seed)` gives
//! 200 hosts of 0.2–20 requests/s summing to 400.

mod bucket;
mod gate;
mod judge;
mod load;
mod pages;
mod restart;
mod site;
mod spec;
#[cfg(test)]
mod tests;

pub use bucket::{Empty, TokenBucket};
pub use gate::{Answer, CapacityRecord, HostGate, ROBOTS_PATH};
pub use judge::{CapacityVerdict, Figures, HostRow, judge};
pub use load::{LoadMeter, load_multiplier, page_factor};
pub use pages::{links_of, page_number, render};
pub use restart::{
    FIRST_MINUTE, PACE_REQUESTS, allowed_in, allowed_in_first_minute, first_minute, over_pace,
    paces_before,
};
pub use site::CapacitySite;
pub use spec::{CapacitySpec, HostCapacity, LADDER_LINKS, LADDER_PAGES, OverCapacity};
