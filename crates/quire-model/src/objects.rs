//! Serde helpers for fields that hold a struct or a tagged enum: accept a
//! JSON object and nothing else.
//!
//! serde's derived `Deserialize` for a struct also accepts a sequence of
//! its fields in declaration order, so `"patch": ["x"]` was read as
//! `{ "name": "x" }` (0.1.0 renamed a page that way), and an internally
//! tagged enum accepts `["RemovePage", "<id>"]`. The wire format is objects
//! only: these helpers ask the deserializer for a map, so anything else is
//! an "invalid type" error naming what was expected.

use std::fmt;
use std::marker::PhantomData;

use serde::de::value::MapAccessDeserializer;
use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// `T`, read only from a JSON object.
struct Object<T>(T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Object<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Only<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for Only<T> {
            type Value = T;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
                T::deserialize(MapAccessDeserializer::new(map))
            }
        }
        d.deserialize_map(Only(PhantomData)).map(Object)
    }
}

/// For a field of type `T`.
pub fn one<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<T, D::Error> {
    Object::deserialize(d).map(|o| o.0)
}

/// For a field of type `Option<T>` (`null` is `None`).
pub fn optional<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    Option::<Object<T>>::deserialize(d).map(|o| o.map(|o| o.0))
}

/// For a field of type `Option<Option<T>>` (a patch field: absent leaves,
/// `null` clears, an object sets).
pub fn clearable<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Option<T>>, D::Error> {
    optional(d).map(Some)
}

/// For a field of type `Vec<T>`.
pub fn list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(d: D) -> Result<Vec<T>, D::Error> {
    Vec::<Object<T>>::deserialize(d).map(|v| v.into_iter().map(|o| o.0).collect())
}

/// For a field of type `Option<Vec<T>>`.
pub fn optional_list<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    d: D,
) -> Result<Option<Vec<T>>, D::Error> {
    Option::<Vec<Object<T>>>::deserialize(d)
        .map(|o| o.map(|v| v.into_iter().map(|o| o.0).collect()))
}
