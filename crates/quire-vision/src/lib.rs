//! Page understanding on pixels, with no model files: where a page's
//! text is and which balloon each piece of it lives in ([`detect`]), and
//! the page with that text removed ([`clean`]).
//! Everything here is a pure function of an image and its settings: the
//! same page gives the same answer, nothing touches a file or the clock.

pub mod clean;
pub mod detect;
mod labels;
pub mod patches;
mod windows;
