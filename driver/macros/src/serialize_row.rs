//! `#[derive(SerializeRow)]`: a struct as the bound values of a statement, and so also a
//! `QueryValues` (`session.execute_unpaged(&prepared, &row)`; the impl lives in the user's crate,
//! which owns the struct, so coherence allows it).
//!
//! By name (the default), when the bind markers are known (a prepared statement): each
//! marker takes the field of its name (its own position tried first), checked against the
//! marker's type; a marker no field has, a field no marker has, and a field whose type does
//! not fit are errors naming the column. Without markers (an unprepared QUERY): the fields
//! in declaration order, each as its natural CQL type. By position (`by_position`): field
//! `i` is marker `i`, the count checked.
//!
//! The check runs at each execution (the trait keeps no state per statement): one name
//! comparison per marker when the struct declares its fields in the markers' order, and no
//! allocation (the bound fields are tracked in an array on the stack).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::generics;
use crate::input::Input;

/// The `SerializeRow` and `QueryValues` impls of `input`.
pub(crate) fn expand(input: &Input) -> syn::Result<TokenStream> {
    let krate = &input.krate;
    let support = quote!(#krate::derive_support);
    let where_clause = generics::where_clause(input, &quote!(#krate::serialize::SerializeValue));
    let where_clause = generics::tokens(&where_clause);
    let (impl_generics, ty_generics, _) = input.generics.split_for_impl();
    let ident = &input.ident;
    let n = input.fields.len();
    let names = input.names();
    let spec = quote!(#krate::metadata::ColumnSpec);
    let columns_ty = quote!(::core::option::Option<&[#spec]>);
    let buf_ty = quote!(&mut #support::BytesMut);

    let positional: Vec<TokenStream> = (input.fields.iter().enumerate())
        .map(|(i, f)| {
            let member = &f.member;
            quote_spanned!(f.ty.span()=> #support::bind(&self.#member, #i, columns, buf)?;)
        })
        .collect();

    let body = if input.by_position {
        quote! {
            #support::check_bind_count(#n, columns)?;
            #(#positional)*
            ::core::result::Result::Ok(())
        }
    } else {
        let arms = (input.fields.iter().enumerate()).map(|(i, f)| {
            let member = &f.member;
            quote_spanned!(f.ty.span()=> #i => #support::bind(&self.#member, marker, columns, buf)?,)
        });
        quote! {
            let ::core::option::Option::Some(markers) = columns else {
                // No markers known: the fields in order, as their natural types.
                #(#positional)*
                return ::core::result::Result::Ok(());
            };
            const NAMES: &[&::core::primitive::str] = &[#(#names),*];
            let mut bound = [false; #n];
            for (marker, spec) in markers.iter().enumerate() {
                let field = #support::field_index(NAMES, marker, &spec.name)
                    .ok_or_else(|| #support::no_field(marker, markers))?;
                if let ::core::option::Option::Some(b) = bound.get_mut(field) {
                    *b = true;
                }
                match field {
                    #(#arms)*
                    _ => {}
                }
            }
            #support::check_all_bound(NAMES, &bound)?;
            // Every field bound and every marker a field's: more markers means a name twice.
            #support::check_bind_count(#n, columns)
        }
    };
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #krate::serialize::SerializeRow for #ident #ty_generics #where_clause {
            fn value_count(&self) -> ::core::primitive::usize {
                #n
            }

            fn serialize_row(&self, columns: #columns_ty, buf: #buf_ty) -> #krate::Result<()> {
                #body
            }
        }

        #[automatically_derived]
        impl #impl_generics #krate::values::QueryValues for #ident #ty_generics #where_clause {
            fn count(&self) -> ::core::primitive::usize {
                #n
            }

            fn write_values(&self, columns: #columns_ty, buf: #buf_ty) -> #krate::Result<()> {
                #krate::serialize::SerializeRow::serialize_row(self, columns, buf)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(src: &str) -> String {
        let input =
            Input::parse(&syn::parse_str(src).expect("Rust"), "SerializeRow").expect("input");
        expand(&input).expect("expands").to_string()
    }

    #[test]
    fn by_name_matches_markers_and_by_position_counts() {
        let by_name =
            expand_str("struct S<'a> { id: i32, #[doppio(rename = \"n\")] name: &'a str }");
        assert!(by_name.contains("SerializeRow for S < 'a >"), "{by_name}");
        assert!(by_name.contains("QueryValues for S < 'a >"), "{by_name}");
        assert!(by_name.contains("[\"id\" , \"n\"]"), "{by_name}");
        assert!(by_name.contains("check_all_bound"), "{by_name}");
        let by_position = expand_str("#[doppio(by_position)] struct S<T: Copy> { a: T }");
        assert!(
            by_position.contains("check_bind_count (1usize , columns)"),
            "{by_position}"
        );
        assert!(
            by_position.contains("T : :: doppio_driver :: proto :: serialize :: SerializeValue")
        );
        assert!(!by_position.contains("field_index"), "{by_position}");
    }
}
