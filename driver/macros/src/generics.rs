//! The generics of a derived impl: the lifetime that reading borrows from, and bounds on the
//! fields' types for a generic struct.

use proc_macro2::TokenStream;
use quote::quote;
use syn::spanned::Spanned;
use syn::{GenericParam, Generics, Lifetime, LifetimeParam, WhereClause};

use crate::input::Input;

/// The lifetime that reading a row or value borrows from (`DeserializeValue<'a>`,
/// `FromRow<'a>`), and the generics of the impl: the struct's own lifetime when it has one
/// (its `&'a str` fields borrow the frame body), else a new one. More than one lifetime
/// cannot be told apart: an error.
pub(crate) fn read_lifetime(input: &Input, derive: &str) -> syn::Result<(Lifetime, Generics)> {
    let mut lifetimes = input.generics.lifetimes();
    match (lifetimes.next(), lifetimes.next()) {
        (Some(one), None) => Ok((one.lifetime.clone(), input.generics.clone())),
        (None, _) => {
            let lt: Lifetime = syn::parse_quote!('__doppio_row);
            let mut generics = input.generics.clone();
            generics
                .params
                .insert(0, GenericParam::Lifetime(LifetimeParam::new(lt.clone())));
            Ok((lt, generics))
        }
        (Some(_), Some(second)) => Err(syn::Error::new(
            second.span(),
            format!(
                "#[derive({derive})] reads borrowed fields from one buffer: the struct may have \
                 one lifetime parameter at most"
            ),
        )),
    }
}

/// The where clause of the impl: the struct's, and for a generic struct `bound` on each
/// field's type.
pub(crate) fn where_clause(input: &Input, bound: &TokenStream) -> Option<WhereClause> {
    let mut clause = input.generics.where_clause.clone();
    if input.has_type_params() {
        let clause = clause.get_or_insert_with(|| WhereClause {
            where_token: Default::default(),
            predicates: Default::default(),
        });
        for f in &input.fields {
            let ty = &f.ty;
            clause.predicates.push(syn::parse_quote!(#ty: #bound));
        }
    }
    clause
}

/// `quote!` of an optional where clause.
pub(crate) fn tokens(clause: &Option<WhereClause>) -> TokenStream {
    match clause {
        Some(c) => quote!(#c),
        None => TokenStream::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(src: &str) -> Input {
        Input::parse(&syn::parse_str(src).expect("valid Rust"), "FromRow").expect("accepted")
    }

    #[test]
    fn the_struct_lifetime_is_the_read_lifetime() {
        let (lt, g) = read_lifetime(&input("struct S<'x> { a: &'x str }"), "FromRow").unwrap();
        assert_eq!(lt.to_string(), "'x");
        assert_eq!(g.params.len(), 1);
        let (lt, g) = read_lifetime(&input("struct S<T> { a: T }"), "FromRow").unwrap();
        assert_eq!(lt.to_string(), "'__doppio_row");
        assert_eq!(g.params.len(), 2);
        let e = read_lifetime(
            &input("struct S<'a, 'b> { a: &'a str, b: &'b str }"),
            "FromRow",
        );
        assert!(e.is_err_and(|e| e.to_string().contains("one lifetime parameter at most")));
    }

    #[test]
    fn generic_structs_bound_their_field_types() {
        let bound = quote!(Trait);
        assert!(where_clause(&input("struct S { a: i32 }"), &bound).is_none());
        let c = where_clause(&input("struct S<T> where T: Copy { a: T, b: i32 }"), &bound);
        let c = tokens(&c).to_string();
        assert_eq!(c, quote!(where T: Copy, T: Trait, i32: Trait).to_string());
    }
}
