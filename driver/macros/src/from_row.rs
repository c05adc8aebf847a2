//! `#[derive(FromRow)]`: a struct from a row.
//!
//! By name (the default): `layout` finds each field's column by name once per result
//! (refusing a missing column, and a column no field reads unless `allow_extra_columns`),
//! checks each column's type against its field, and the row reader then reads each field by
//! index (`from_row_with`). `from_row` alone, without a layout, finds each column by name (its
//! own position first). By position (`by_position`): field `i` is column `i`, the count and
//! each type checked once.
//!
//! Per row, nothing is allocated beyond what the fields' own types allocate (`String` does,
//! `&str` does not).

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use crate::generics;
use crate::input::Input;

/// The `FromRow` impl of `input`.
pub(crate) fn expand(input: &Input) -> syn::Result<TokenStream> {
    let (lt, impl_generics) = generics::read_lifetime(input, "FromRow")?;
    let krate = &input.krate;
    let support = quote!(#krate::derive_support);
    let where_clause =
        generics::where_clause(input, &quote!(#krate::deserialize::DeserializeValue<#lt>));
    let where_clause = generics::tokens(&where_clause);
    let (impl_generics, _, _) = impl_generics.split_for_impl();
    let (_, ty_generics, _) = input.generics.split_for_impl();
    let ident = &input.ident;
    let n = input.fields.len();
    let names = input.names();
    let spec = quote!(#krate::metadata::ColumnSpec);
    let error = quote!((::core::primitive::usize, #krate::ValueError));
    let cells = quote!(&[::core::option::Option<&#lt [::core::primitive::u8]>]);

    // Each field's check and read, spanned at its type: a type that cannot be read is
    // reported there.
    let check = |column: &dyn Fn(usize) -> TokenStream| -> Vec<TokenStream> {
        (input.fields.iter().enumerate())
            .map(|(i, f)| {
                let ty = &f.ty;
                let column = column(i);
                quote_spanned!(ty.span()=> #support::check::<#ty>(columns, #column)?;)
            })
            .collect()
    };
    let read = |read: &dyn Fn(usize, &str) -> TokenStream| -> Vec<TokenStream> {
        (input.fields.iter().enumerate())
            .map(|(i, f)| {
                let (member, ty) = (&f.member, &f.ty);
                let call = read(i, &f.name);
                quote_spanned!(ty.span()=> #member: #support::#call?,)
            })
            .collect()
    };

    let methods = if input.by_position {
        let checks = check(&|i| quote!(#i));
        let reads = read(&|i, _| quote!(read::<_>(columns, values, #i)));
        quote! {
            fn type_check(columns: &[#spec]) -> ::core::result::Result<(), #error> {
                #support::check_column_count(columns, #n)?;
                #(#checks)*
                ::core::result::Result::Ok(())
            }

            fn from_row(columns: &[#spec], values: #cells) -> ::core::result::Result<Self, #error> {
                ::core::result::Result::Ok(Self { #(#reads)* })
            }
        }
    } else {
        let extra = input.extra_columns;
        let checks = check(&|i| quote!(layout.column(#i)));
        let named = read(&|i, name| quote!(read_named::<_>(columns, values, #i, #name)));
        let indexed = read(&|i, _| quote!(read::<_>(columns, values, layout.column(#i))));
        quote! {
            fn type_check(columns: &[#spec]) -> ::core::result::Result<(), #error> {
                <Self as #krate::deserialize::FromRow<#lt>>::layout(columns).map(|_| ())
            }

            fn layout(
                columns: &[#spec],
            ) -> ::core::result::Result<#krate::deserialize::RowLayout, #error> {
                let layout = #support::layout_by_name(columns, &[#(#names),*], #extra)?;
                #(#checks)*
                ::core::result::Result::Ok(layout)
            }

            fn from_row(columns: &[#spec], values: #cells) -> ::core::result::Result<Self, #error> {
                ::core::result::Result::Ok(Self { #(#named)* })
            }

            fn from_row_with(
                layout: &#krate::deserialize::RowLayout,
                columns: &[#spec],
                values: #cells,
            ) -> ::core::result::Result<Self, #error> {
                ::core::result::Result::Ok(Self { #(#indexed)* })
            }
        }
    };
    Ok(quote! {
        #[automatically_derived]
        impl #impl_generics #krate::deserialize::FromRow<#lt> for #ident #ty_generics #where_clause {
            #methods
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_str(src: &str) -> String {
        let input = Input::parse(&syn::parse_str(src).expect("Rust"), "FromRow").expect("input");
        expand(&input).expect("expands").to_string()
    }

    #[test]
    fn by_name_reads_through_the_layout_and_by_position_by_index() {
        let by_name =
            expand_str("struct S<'a> { id: i32, #[doppio(rename = \"n\")] name: &'a str }");
        assert!(by_name.contains("FromRow < 'a > for S < 'a >"), "{by_name}");
        assert!(
            by_name.contains("layout_by_name (columns , & [\"id\" , \"n\"] , false)"),
            "{by_name}"
        );
        assert!(by_name.contains("fn from_row_with"), "{by_name}");
        assert!(by_name.contains("layout . column (1usize)"), "{by_name}");
        let by_position = expand_str("#[doppio(by_position)] struct S { id: i32, v: String }");
        assert!(
            by_position.contains("FromRow < '__doppio_row > for S"),
            "{by_position}"
        );
        assert!(
            by_position.contains("check_column_count (columns , 2usize)"),
            "{by_position}"
        );
        assert!(!by_position.contains("from_row_with"), "{by_position}");
        let extra = expand_str(
            "#[doppio(allow_extra_columns, crate = ::doppio_proto)] struct S { a: i32 }",
        );
        assert!(
            extra.contains("layout_by_name (columns , & [\"a\"] , true)"),
            "{extra}"
        );
        assert!(
            extra.contains(":: doppio_proto :: derive_support"),
            "{extra}"
        );
        assert!(!extra.contains("doppio_driver :: proto"), "{extra}");
    }
}
