//! `#[derive(DeserializeValue)]`: a struct from a user-defined type's value.
//!
//! `type_check` (once per column): the type is a UDT and each field of the struct is one of
//! its fields, by name, of a type the field reads. A UDT field the struct does not have is
//! skipped (a type that grew with `ALTER TYPE ... ADD` still reads into the struct written
//! before). `deserialize` (per value): the value's fields in the type's order, each handed to
//! the struct field of its name (its own position tried first, then a search: the trait keeps
//! no state between values); a value shorter than its type (written before a field was
//! added) reads its missing fields as null.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use crate::generics;
use crate::input::Input;

/// The `DeserializeValue` impl of `input`.
pub(crate) fn expand(input: &Input) -> syn::Result<TokenStream> {
    let (lt, impl_generics) = generics::read_lifetime(input, "DeserializeValue")?;
    let krate = &input.krate;
    let support = quote!(#krate::derive_support);
    let trait_ = quote!(#krate::deserialize::DeserializeValue<#lt>);
    let where_clause = generics::where_clause(input, &trait_);
    let where_clause = generics::tokens(&where_clause);
    let (impl_generics, _, _) = impl_generics.split_for_impl();
    let (_, ty_generics, _) = input.generics.split_for_impl();
    let ident = &input.ident;
    let names = input.names();
    let column_type = quote!(#krate::types::ColumnType);
    let result = quote!(#krate::value::ValueResult);

    let checks = input.fields.iter().map(|f| {
        let (ty, name) = (&f.ty, &f.name);
        quote_spanned! {ty.span()=>
            <#ty as #trait_>::type_check(#support::udt_field_type(udt, fields, #name)?)?;
        }
    });
    let slot = |i: usize| format_ident!("__field{}", i);
    let slots = input.fields.iter().enumerate().map(|(i, f)| {
        let (slot, ty) = (slot(i), &f.ty);
        quote!(let mut #slot: ::core::option::Option<#ty> = ::core::option::Option::None;)
    });
    let arms = input.fields.iter().enumerate().map(|(i, f)| {
        let (slot, ty) = (slot(i), &f.ty);
        quote_spanned! {ty.span()=>
            ::core::option::Option::Some(#i) => {
                #slot = ::core::option::Option::Some(<#ty as #trait_>::deserialize(typ, cell)?);
            }
        }
    });
    let inits = input.fields.iter().enumerate().map(|(i, f)| {
        let (slot, member, name) = (slot(i), &f.member, &f.name);
        quote!(#member: #slot.ok_or_else(|| #support::missing_udt_field(udt, #name))?,)
    });
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #trait_ for #ident #ty_generics #where_clause {
            fn type_check(typ: &#column_type) -> #result<()> {
                let (udt, fields) = #support::udt_to_read::<Self>(typ)?;
                #(#checks)*
                ::core::result::Result::Ok(())
            }

            fn deserialize(
                typ: &#column_type,
                bytes: ::core::option::Option<&#lt [::core::primitive::u8]>,
            ) -> #result<Self> {
                const NAMES: &[&::core::primitive::str] = &[#(#names),*];
                let (udt, fields) = #support::udt_to_read::<Self>(typ)?;
                let mut rest = #support::non_null::<Self>(bytes)?;
                #(#slots)*
                for (at, (name, typ)) in fields.iter().enumerate() {
                    let cell = #support::next_udt_field(&mut rest)?;
                    match #support::field_index(NAMES, at, name) {
                        #(#arms)*
                        _ => {}
                    }
                }
                #support::udt_end(rest)?;
                ::core::result::Result::Ok(Self { #(#inits)* })
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_in_the_types_order_by_name() {
        let src = "struct P<'a> { x: i32, #[doppio(rename = \"label\")] l: Option<&'a str> }";
        let input =
            Input::parse(&syn::parse_str(src).expect("Rust"), "DeserializeValue").expect("input");
        let out = expand(&input).expect("expands").to_string();
        assert!(
            out.contains("DeserializeValue < 'a > for P < 'a >"),
            "{out}"
        );
        assert!(out.contains("[\"x\" , \"label\"]"), "{out}");
        assert!(
            out.contains("udt_field_type (udt , fields , \"label\")"),
            "{out}"
        );
        assert!(out.contains("next_udt_field"), "{out}");
    }
}
