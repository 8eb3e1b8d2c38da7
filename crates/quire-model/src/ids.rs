//! Typed ids. All are UUIDs; the core makes v7 ids, which sort by creation.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use uuid::Uuid;

macro_rules! uuid_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, schemars::JsonSchema)]
        #[serde(transparent)]
        #[schemars(transparent)]
        pub struct $name(pub Uuid);

        impl $name {
            /// A fresh v7 id.
            pub fn new() -> Self {
                $name(Uuid::now_v7())
            }
        }

        impl Default for $name {
            fn default() -> Self {
                Self::new()
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }

        impl fmt::Debug for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}({})", stringify!($name), self.0)
            }
        }

        impl FromStr for $name {
            type Err = uuid::Error;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                Uuid::parse_str(s).map($name)
            }
        }
    };
}

uuid_id!(
    /// A page of a scene.
    PageId
);
uuid_id!(
    /// A node (layer) of a page.
    NodeId
);
uuid_id!(
    /// An open project in this process; new at every open.
    SessionId
);
uuid_id!(
    /// A project, fixed at creation and kept in `project.toml`.
    ProjectId
);
uuid_id!(
    /// A pipeline job.
    JobId
);
