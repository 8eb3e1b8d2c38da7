//! Layered configuration: the schema, the layers (figment), secrets, the
//! mode files (`modes.rs`: which frontends a mode starts), and the
//! directories quire reads and writes. It depends on nothing else of quire.

mod checks;
pub mod dirs;
pub mod error;
mod load;
pub mod modes;
pub mod reload;
pub mod schema;
pub mod secret;
pub mod show;
pub mod source;

pub use error::ConfigError;
pub use load::{FileRole, LoadRequest, Loaded, ModeSelect, Overrides, check_file, load, load_with};
pub use schema::Config;
