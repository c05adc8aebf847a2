//! `doppio-macros`: derive macros for the CQL driver `doppio` (which re-exports them with its
//! default feature `derive`) and its protocol crate `doppio-proto`.
//!
//! - [`FromRow`]: a struct from a row, by column name (or `#[doppio(by_position)]`).
//! - [`SerializeRow`]: a struct as a statement's bound values, by bind-marker name when the
//!   markers are known (or `#[doppio(by_position)]`); also a `QueryValues`, so it binds
//!   directly: `session.execute_unpaged(&prepared, &row)`.
//! - [`DeserializeValue`] and [`SerializeValue`]: a struct as a user-defined type's value,
//!   its fields matched by name, both ways.
//!
//! Attributes (`#[doppio(...)]`), shared by the four: on the struct, `crate = path` (the
//! protocol crate's path in the generated code: `::doppio_driver::proto` by default, write
//! `crate = ::doppio_proto` with doppio-proto alone), `by_position`, `allow_extra_columns`
//! (rows by name: columns no field reads are skipped); on a field, `rename = "name"`.
//!
//! Checked at compile time: a struct with named fields (enums, unions, tuple and unit structs
//! are refused), known attributes each given once, no two fields of one name, one lifetime
//! at most for the derives that read (borrowed fields such as `&'a str` borrow the frame),
//! and each field's type implements the trait it needs. Checked at run time, with typed
//! errors (`doppio_proto::ValueError`) naming the column or field: names missing on either
//! side, counts, and each field's type against its column's, once per result for rows and
//! once per column for UDTs.
//!
//! ```
//! use doppio_macros::{DeserializeValue, FromRow, SerializeRow, SerializeValue};
//!
//! #[derive(DeserializeValue, SerializeValue)]
//! #[doppio(crate = ::doppio_proto)] // with `doppio`, leave this out
//! struct Point {
//!     x: i32,
//!     y: i32,
//! }
//!
//! #[derive(FromRow, SerializeRow)]
//! #[doppio(crate = ::doppio_proto)]
//! struct Place<'a> {
//!     id: i64,
//!     #[doppio(rename = "label")]
//!     name: &'a str,
//!     at: Option<Point>,
//! }
//! ```
//!
//! Modules: `input` (the struct and its attributes, checked), `generics` (the impls'
//! lifetime and bounds), and one per derive: `from_row`, `serialize_row`,
//! `deserialize_value`, `serialize_value`. The expanded code calls the protocol crate's
//! hidden `derive_support` module.

use proc_macro::TokenStream;
use syn::{parse_macro_input, DeriveInput};

mod deserialize_value;
mod from_row;
mod generics;
mod input;
mod serialize_row;
mod serialize_value;

type Expand = fn(&input::Input) -> syn::Result<proc_macro2::TokenStream>;

fn derive(input: TokenStream, name: &str, expand: Expand) -> TokenStream {
    let input = parse_macro_input!(input as DeriveInput);
    input::Input::parse(&input, name)
        .and_then(|i| expand(&i))
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

/// Implements `FromRow` (`doppio_driver::proto::deserialize::FromRow`): the struct read from each
/// row of a result (`QueryResult::typed_rows`, `Rows::typed`).
///
/// By name (the default): each field reads the column of its name (or its `rename`); where
/// each column is, and whether its type fits the field, is found once per result; every
/// column must be read by a field unless `#[doppio(allow_extra_columns)]`. With
/// `#[doppio(by_position)]`: field `i` reads column `i`, and the counts must match. A field
/// of type `Option<T>` reads null as `None`; any other refuses it. Errors:
/// `ValueError::MissingColumn`, `NoFieldForColumn`, `ColumnCount`, `CannotDeserialize`,
/// `Null`, each in a `ProtoError::Value` naming the column.
#[proc_macro_derive(FromRow, attributes(doppio))]
pub fn derive_from_row(input: TokenStream) -> TokenStream {
    derive(input, "FromRow", from_row::expand)
}

/// Implements `SerializeRow` and `QueryValues` (`doppio_driver::proto::serialize::SerializeRow`,
/// `doppio_driver::proto::values::QueryValues`): the struct as a statement's bound values.
///
/// By name (the default) when the bind markers are known (a prepared statement): each
/// marker takes the field of its name, checked against the marker's type. Without them (an
/// unprepared statement) the fields are bound in declaration order as their natural types.
/// With `#[doppio(by_position)]`: field `i` is marker `i`. Errors (`ProtoError::Value`
/// naming the column): `ValueError::NoFieldForColumn` (a marker no field has),
/// `NoBindMarker` (a field no marker has), `CannotSerialize` (a type that does not fit).
#[proc_macro_derive(SerializeRow, attributes(doppio))]
pub fn derive_serialize_row(input: TokenStream) -> TokenStream {
    derive(input, "SerializeRow", serialize_row::expand)
}

/// Implements `DeserializeValue` (`doppio_driver::proto::deserialize::DeserializeValue`): the
/// struct read from a user-defined type's value, fields by name.
///
/// Each field of the struct must be a field of the UDT (`ValueError::NoSuchField`); UDT
/// fields the struct does not have are skipped, and fields missing at the end of a value
/// (written before `ALTER TYPE ... ADD`) read as null (`Option` fields read `None`).
#[proc_macro_derive(DeserializeValue, attributes(doppio))]
pub fn derive_deserialize_value(input: TokenStream) -> TokenStream {
    derive(input, "DeserializeValue", deserialize_value::expand)
}

/// Implements `SerializeValue` (`doppio_driver::proto::serialize::SerializeValue`): the struct as
/// a user-defined type's value, fields by name.
///
/// Each field of the struct must be a field of the UDT (`ValueError::NoSuchField`); UDT
/// fields the struct does not have are written null, or left out after its last field.
/// Without a known type (an unprepared statement) the fields go in declaration order.
#[proc_macro_derive(SerializeValue, attributes(doppio))]
pub fn derive_serialize_value(input: TokenStream) -> TokenStream {
    derive(input, "SerializeValue", serialize_value::expand)
}
