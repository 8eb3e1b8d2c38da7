//! Where quire looks for configuration and keeps its data.

use std::path::{Path, PathBuf};

use directories::ProjectDirs;

use super::schema::Config;

/// Environment variable that relocates the system configuration directory
/// (default `/etc/quire`). Meant for tests and for packagers checking a
/// staged root; it is not a config key.
pub const SYSTEM_DIR_ENV: &str = "QUIRE_SYSTEM_CONFIG_DIR";

/// The platform directories, found once at start.
#[derive(Debug, Clone)]
pub struct Dirs {
    /// `/etc/quire` (same on macOS).
    pub system: PathBuf,
    /// `$XDG_CONFIG_HOME/quire` on Linux, `~/Library/Application Support/quire` on macOS.
    pub user_config: Option<PathBuf>,
    /// `$XDG_DATA_HOME/quire` on Linux.
    pub user_data: Option<PathBuf>,
}

impl Dirs {
    pub fn detect() -> Self {
        let project = ProjectDirs::from("", "", "quire");
        let system = std::env::var_os(SYSTEM_DIR_ENV)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("/etc/quire"));
        Dirs {
            system,
            user_config: project.as_ref().map(|p| p.config_dir().to_path_buf()),
            user_data: project.as_ref().map(|p| p.data_dir().to_path_buf()),
        }
    }

    pub fn system_config_file(&self) -> PathBuf {
        self.system.join("config.toml")
    }

    pub fn system_modes_dir(&self) -> PathBuf {
        self.system.join("modes")
    }

    pub fn user_config_file(&self) -> Option<PathBuf> {
        self.user_config.as_ref().map(|d| d.join("config.toml"))
    }

    pub fn user_modes_dir(&self) -> Option<PathBuf> {
        self.user_config.as_ref().map(|d| d.join("modes"))
    }
}

/// The data locations of a loaded config, with empty settings replaced by
/// their platform defaults.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataPaths {
    pub data_dir: PathBuf,
    pub projects_dir: PathBuf,
    pub logs_dir: PathBuf,
    /// Imported translation memories (TMX).
    pub memory_dir: PathBuf,
}

impl DataPaths {
    pub fn resolve(config: &Config, dirs: &Dirs) -> Option<Self> {
        let data_dir = if config.paths.data_dir.as_os_str().is_empty() {
            dirs.user_data.clone()?
        } else {
            absolute(&config.paths.data_dir)
        };
        let projects_dir = if config.paths.projects_dir.as_os_str().is_empty() {
            data_dir.join("projects")
        } else {
            absolute(&config.paths.projects_dir)
        };
        let logs_dir = data_dir.join("logs");
        let memory_dir = data_dir.join("memory");
        Some(DataPaths {
            data_dir,
            projects_dir,
            logs_dir,
            memory_dir,
        })
    }
}

/// Makes a configured path absolute against the working directory, so that
/// a later `chdir` (or a message) cannot change what it means.
fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
