//! `#[derive(SerializeValue)]`: a struct as a user-defined type's value.
//!
//! `write` for a UDT type: every field of the struct must be one of the type's (else
//! `NoSuchField`, naming both); the value is written in the type's field order, each field
//! checked against its type; a field of the type the struct does not have is written null
//! before the struct's last field and left out after it (spec section 7 allows a value with
//! fewer fields than its type). `natural_type` (an unprepared statement, no type known): a
//! UDT of the struct's fields in declaration order, each of its natural type, so the value is
//! the fields in declaration order.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::generics;
use crate::input::Input;

/// The `SerializeValue` impl of `input`.
pub(crate) fn expand(input: &Input) -> syn::Result<TokenStream> {
    let krate = &input.krate;
    let support = quote!(#krate::derive_support);
    let trait_ = quote!(#krate::serialize::SerializeValue);
    let where_clause = generics::where_clause(input, &trait_);
    let where_clause = generics::tokens(&where_clause);
    let (impl_generics, ty_generics, _) = input.generics.split_for_impl();
    let ident = &input.ident;
    let rust_name = ident.to_string();
    let names = input.names();
    let column_type = quote!(#krate::types::ColumnType);

    let natural = input.fields.iter().map(|f| {
        let (member, name) = (&f.member, &f.name);
        quote_spanned! {f.ty.span()=>
            (::std::string::String::from(#name), #trait_::natural_type(&self.#member)),
        }
    });
    let arms = input.fields.iter().enumerate().map(|(i, f)| {
        let member = &f.member;
        quote_spanned! {f.ty.span()=>
            ::core::option::Option::Some(#i) => {
                #support::write_udt_field(&self.#member, typ, &mut nulls, buf)?
            }
        }
    });
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #trait_ for #ident #ty_generics #where_clause {
            fn natural_type(&self) -> #column_type {
                #column_type::Udt {
                    keyspace: ::std::string::String::new(),
                    name: ::std::string::String::from(#rust_name),
                    fields: ::std::vec![#(#natural)*],
                }
            }

            fn write(
                &self,
                typ: &#column_type,
                buf: &mut #support::BytesMut,
            ) -> #krate::value::ValueResult<()> {
                const NAMES: &[&::core::primitive::str] = &[#(#names),*];
                let (udt, fields) = #support::udt_to_write::<Self>(typ)?;
                #support::udt_has_fields(udt, fields, NAMES)?;
                // Fields of the type the struct lacks, written as nulls only if a field of
                // the struct follows them.
                let mut nulls = 0usize;
                for (at, (name, typ)) in fields.iter().enumerate() {
                    match #support::field_index(NAMES, at, name) {
                        #(#arms)*
                        _ => nulls += 1,
                    }
                }
                ::core::result::Result::Ok(())
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_written_in_the_types_order() {
        let src = "struct P<T> { x: T, #[doppio(rename = \"label\")] l: String }";
        let input =
            Input::parse(&syn::parse_str(src).expect("Rust"), "SerializeValue").expect("input");
        let out = expand(&input).expect("expands").to_string();
        assert!(out.contains("SerializeValue for P < T >"), "{out}");
        assert!(
            out.contains("udt_has_fields (udt , fields , NAMES)"),
            "{out}"
        );
        assert!(out.contains("String :: from (\"P\")"), "{out}");
        assert!(
            out.contains("T : :: doppio_driver :: proto :: serialize :: SerializeValue"),
            "{out}"
        );
    }
}
