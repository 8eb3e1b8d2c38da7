//! Layered configuration: the schema, the layers (figment), secrets, and
//! the directories quire reads and writes.

pub mod dirs;
pub mod error;
mod load;
pub mod schema;
pub mod secret;
pub mod show;
pub mod source;

pub use error::ConfigError;
pub use load::{FileRole, LoadRequest, Loaded, ModeSelect, Overrides, check_file, load, load_with};
pub use schema::Config;
