//! The struct a derive reads: its fields, their CQL names and the `#[doppio(...)]`
//! attributes, checked here once for every derive (so each error is reported at its span,
//! at compile time).
//!
//! Struct attributes: `crate = path` (where the protocol crate is: `::doppio_driver::proto` by
//! default, `::doppio_proto` for users of that crate alone), `by_position` (rows: fields are
//! the columns in order, names unused), `allow_extra_columns` (rows read by name: columns no
//! field reads are skipped rather than refused). Field attribute: `rename = "name"` (the
//! column, bind marker or UDT field's name, when it is not the field's).
//!
//! The attributes are shared by every derive on the struct, so each derive accepts them all
//! and uses those that concern it.

use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::spanned::Spanned;
use syn::{Data, DeriveInput, Fields, Generics, Ident, LitStr, Path, Type};

/// One named field.
pub(crate) struct Field {
    /// The Rust field.
    pub(crate) member: Ident,
    /// Its type.
    pub(crate) ty: Type,
    /// The CQL name it is matched by (the field's name without `r#`, or its `rename`).
    pub(crate) name: String,
}

/// A struct with named fields, and what its attributes say.
pub(crate) struct Input {
    /// The struct's name.
    pub(crate) ident: Ident,
    /// Its generics, as declared.
    pub(crate) generics: Generics,
    /// The path of the protocol crate in generated code.
    pub(crate) krate: Path,
    /// `#[doppio(by_position)]`.
    pub(crate) by_position: bool,
    /// `#[doppio(allow_extra_columns)]`.
    pub(crate) extra_columns: bool,
    /// The fields, in declaration order.
    pub(crate) fields: Vec<Field>,
}

/// Collects errors so that one expansion reports them all.
#[derive(Default)]
struct Errors(Option<syn::Error>);

impl Errors {
    fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            Some(all) => all.combine(e),
            None => self.0 = Some(e),
        }
    }

    fn finish<T>(self, ok: T) -> syn::Result<T> {
        match self.0 {
            Some(e) => Err(e),
            None => Ok(ok),
        }
    }
}

const STRUCT_ATTRIBUTES: &str = "`crate = path`, `by_position` or `allow_extra_columns`";

impl Input {
    /// Reads `input` for the derive `derive` (named in errors).
    pub(crate) fn parse(input: &DeriveInput, derive: &str) -> syn::Result<Self> {
        let named = match &input.data {
            Data::Struct(s) => match &s.fields {
                Fields::Named(named) => named,
                Fields::Unnamed(f) => {
                    return Err(syn::Error::new(
                        f.span(),
                        format!(
                            "#[derive({derive})] needs named fields: each field is matched by \
                             its name (a tuple reads a row or a tuple value by position already)"
                        ),
                    ))
                }
                Fields::Unit => {
                    return Err(syn::Error::new(
                        input.ident.span(),
                        format!("#[derive({derive})] needs a struct with named fields"),
                    ))
                }
            },
            Data::Enum(e) => {
                return Err(syn::Error::new(
                    e.enum_token.span,
                    format!("#[derive({derive})] supports structs with named fields, not enums"),
                ))
            }
            Data::Union(u) => {
                return Err(syn::Error::new(
                    u.union_token.span,
                    format!("#[derive({derive})] supports structs with named fields, not unions"),
                ))
            }
        };
        let mut errors = Errors::default();
        let mut krate: Option<Path> = None;
        let mut by_position: Option<Span> = None;
        let mut extra_columns: Option<Span> = None;
        for attr in input.attrs.iter().filter(|a| a.path().is_ident("doppio")) {
            let parsed = attr.parse_nested_meta(|meta| {
                let span = meta.path.span();
                let duplicate = || syn::Error::new(span, "duplicate doppio attribute");
                if meta.path.is_ident("crate") {
                    if krate.is_some() {
                        return Err(duplicate());
                    }
                    krate = Some(meta.value()?.parse()?);
                } else if meta.path.is_ident("by_position") {
                    if by_position.replace(span).is_some() {
                        return Err(duplicate());
                    }
                } else if meta.path.is_ident("allow_extra_columns") {
                    if extra_columns.replace(span).is_some() {
                        return Err(duplicate());
                    }
                } else {
                    return Err(meta.error(format!(
                        "unknown doppio attribute on a struct: expected {STRUCT_ATTRIBUTES}"
                    )));
                }
                Ok(())
            });
            if let Err(e) = parsed {
                errors.push(e);
            }
        }
        if let (Some(_), Some(extra)) = (by_position, extra_columns) {
            errors.push(syn::Error::new(
                extra,
                "`allow_extra_columns` is for rows read by name; `by_position` reads every column",
            ));
        }
        let mut fields: Vec<Field> = Vec::with_capacity(named.named.len());
        for f in &named.named {
            let Some(member) = f.ident.clone() else {
                continue;
            };
            let mut rename: Option<LitStr> = None;
            for attr in f.attrs.iter().filter(|a| a.path().is_ident("doppio")) {
                let parsed = attr.parse_nested_meta(|meta| {
                    if meta.path.is_ident("rename") {
                        let lit: LitStr = meta.value()?.parse()?;
                        if rename.is_some() {
                            return Err(syn::Error::new(lit.span(), "duplicate `rename`"));
                        }
                        if lit.value().is_empty() {
                            return Err(syn::Error::new(lit.span(), "an empty name"));
                        }
                        if let Some(span) = by_position {
                            let mut e = syn::Error::new(
                                lit.span(),
                                "`rename` has no effect on a struct read `by_position`",
                            );
                            e.combine(syn::Error::new(span, "`by_position` is here"));
                            return Err(e);
                        }
                        rename = Some(lit);
                        Ok(())
                    } else {
                        Err(meta.error(
                            "unknown doppio attribute on a field: expected `rename = \"name\"`",
                        ))
                    }
                });
                if let Err(e) = parsed {
                    errors.push(e);
                }
            }
            let (name, span) = match &rename {
                Some(lit) => (lit.value(), lit.span()),
                None => (member.unraw().to_string(), member.span()),
            };
            if let Some(first) = fields.iter().find(|g| g.name == name) {
                errors.push(syn::Error::new(
                    span,
                    format!(
                        "two fields have the name `{name}` (`{}` and `{member}`): each column, bind \
                         marker or UDT field is read by one field",
                        first.member
                    ),
                ));
            }
            fields.push(Field {
                member,
                ty: f.ty.clone(),
                name,
            });
        }
        let krate = krate.unwrap_or_else(|| syn::parse_quote!(::doppio_driver::proto));
        errors.finish(Input {
            ident: input.ident.clone(),
            generics: input.generics.clone(),
            krate,
            by_position: by_position.is_some(),
            extra_columns: extra_columns.is_some(),
            fields,
        })
    }

    /// The names of the fields, in order.
    pub(crate) fn names(&self) -> Vec<&str> {
        self.fields.iter().map(|f| f.name.as_str()).collect()
    }

    /// True if the struct has type parameters (its fields' types then get bounds).
    pub(crate) fn has_type_params(&self) -> bool {
        self.generics.type_params().next().is_some()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(src: &str) -> syn::Result<Input> {
        Input::parse(&syn::parse_str(src).expect("valid Rust"), "FromRow")
    }

    fn error(src: &str) -> String {
        match parse(src) {
            Ok(_) => panic!("accepted: {src}"),
            Err(e) => e
                .into_iter()
                .map(|e| e.to_string())
                .collect::<Vec<_>>()
                .join(" | "),
        }
    }

    #[test]
    fn names_come_from_fields_or_renames() {
        let input = parse(
            "#[doppio(crate = ::doppio_proto)] struct S<'a> { id: i32, \
             #[doppio(rename = \"user name\")] name: &'a str, r#type: String }",
        )
        .unwrap();
        assert_eq!(input.names(), ["id", "user name", "type"]);
        let krate = &input.krate;
        assert_eq!(
            quote::quote!(#krate).to_string(),
            quote::quote!(::doppio_proto).to_string()
        );
        assert!(!input.by_position && !input.extra_columns && !input.has_type_params());
        let krate = parse("struct S { a: i32 }").unwrap().krate;
        assert_eq!(
            quote::quote!(#krate).to_string(),
            quote::quote!(::doppio_driver::proto).to_string()
        );
        let input = parse("#[doppio(by_position)] struct S<T> { a: T }").unwrap();
        assert!(input.by_position && input.has_type_params());
    }

    #[test]
    fn what_cannot_be_derived_is_refused_with_a_reason() {
        assert!(error("enum E { A }").contains("not enums"));
        assert!(error("union U { a: u32 }").contains("not unions"));
        assert!(error("struct T(i32, i32);").contains("needs named fields"));
        assert!(error("struct U;").contains("needs a struct with named fields"));
    }

    #[test]
    fn attributes_are_checked() {
        assert!(error("#[doppio(by_name)] struct S { a: i32 }")
            .contains("unknown doppio attribute on a struct"));
        assert!(error("struct S { #[doppio(skip)] a: i32 }")
            .contains("unknown doppio attribute on a field"));
        assert!(
            error("#[doppio(by_position, by_position)] struct S { a: i32 }").contains("duplicate")
        );
        assert!(
            error("struct S { #[doppio(rename = \"x\", rename = \"y\")] a: i32 }")
                .contains("duplicate `rename`")
        );
        assert!(error("struct S { #[doppio(rename = \"\")] a: i32 }").contains("empty name"));
        assert!(
            error("struct S { #[doppio(rename = 3)] a: i32 }").contains("expected string literal")
        );
        assert!(
            error("#[doppio(by_position)] struct S { #[doppio(rename = \"x\")] a: i32 }")
                .contains("no effect")
        );
        assert!(
            error("#[doppio(by_position, allow_extra_columns)] struct S { a: i32 }")
                .contains("reads every column")
        );
        // Two fields that would read one column, by rename or by a rename meeting a name.
        let e = error("struct S { #[doppio(rename = \"b\")] a: i32, b: i32 }");
        assert!(
            e.contains("two fields have the name `b` (`a` and `b`)"),
            "{e}"
        );
        // Every error is reported, not only the first.
        let e = error("#[doppio(nope)] struct S { #[doppio(what)] a: i32 }");
        assert_eq!(e.matches("unknown doppio attribute").count(), 2, "{e}");
    }
}
