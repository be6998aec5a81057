use super::*;
use serde_json::json;

#[derive(Debug, serde::Deserialize, serde::Serialize, utoipa::ToSchema, PartialEq)]
#[serde(rename_all = "lowercase")]
enum Shade {
    Light,
    Dark,
}
crate::closed_enum!(Shade);

/// An item
#[derive(Debug, Input)]
struct Item {
    language: Language,
    name: Text<1, 5>,
}

/// A body with one field of every slot kind
#[derive(Debug, Input)]
#[input(example = json!({"name": "Ann", "shade": "dark"}))]
struct Body {
    /// The display name
    name: Text<1, 10>,
    note: Option<MultilineText<0, 20>>,
    shade: Nullable<Shade>,
    parent_id: Patch<uuid::Uuid>,
    #[input(rename = "type")]
    kind: Option<Shade>,
    items: Option<List<Item, 2>>,
    price: Option<Decimal<0, 1000, 2>>,
    due: Option<DateOnly>,
}

fn read(v: Value) -> Result<Body, Invalid> {
    parse::<Body>(&v)
}

fn failing(v: Value) -> Vec<String> {
    read(v).unwrap_err().errors.into_keys().collect()
}

#[test]
fn a_valid_body_is_read_with_its_slots() {
    let body = read(json!({"name": " Ann ", "note": "a\nb", "shade": null, "parentId": null, "type": "light",
        "items": [{"language": "DE", "name": "x"}], "price": 19.99, "due": "2026-02-28"}))
    .unwrap();
    assert_eq!(body.name.as_str(), "Ann");
    assert_eq!(body.note.as_deref(), Some("a\nb"));
    assert_eq!(body.shade, Nullable(None));
    assert_eq!(body.parent_id, Patch::Null);
    assert_eq!(body.kind, Some(Shade::Light));
    let items = body.items.unwrap().0;
    assert_eq!((items[0].language.code(), items[0].name.as_str()), ("de", "x"));
    assert_eq!(body.due.unwrap().0.to_string(), "2026-02-28");
    assert_eq!(body.price.unwrap().0, rust_decimal::Decimal::new(1999, 2));
    let minimal = read(json!({"name": "Ann", "shade": "dark"})).unwrap();
    assert_eq!((minimal.parent_id, minimal.kind, minimal.note), (Patch::Absent, None, None));
}

#[test]
fn every_failing_field_is_reported_by_its_path() {
    let keys = failing(json!({"name": "", "note": null, "parentId": "x", "type": "grey",
        "items": [{"language": "xx"}, 5, {}], "price": 1.234, "due": "2026-02-30"}));
    assert_eq!(
        keys,
        [
            "due",
            "items",
            "items[0].language",
            "items[0].name",
            "items[1]",
            "items[2].language",
            "items[2].name",
            "name",
            "note",
            "parentId",
            "price",
            "shade",
            "type"
        ]
    );
}

#[test]
fn text_refuses_controls_invisible_characters_and_overlong_values() {
    for bad in ["a\u{0}b", "a\u{202E}b", "\u{200B}", "a\u{2028}b", "abcdefghijk", "   ", "\n"] {
        assert_eq!(failing(json!({"name": bad, "shade": null})), ["name"], "{bad:?}");
    }
    // Emoji sequences keep their zero-width joiner; length is counted in characters.
    assert!(read(json!({"name": "👩‍💻éééé", "shade": null})).is_ok());
    assert!(failing(json!({"name": "a", "shade": null, "note": "tab\there"})).contains(&"note".to_owned()));
}

#[test]
fn decimals_are_exact_or_refused() {
    let price = |v: Value| read(json!({"name": "a", "shade": null, "price": v})).map(|b| b.price.unwrap().0);
    assert_eq!(price(json!(0.1)).unwrap().to_string(), "0.1");
    assert_eq!(price(json!(1000)).unwrap(), rust_decimal::Decimal::from(1000));
    assert_eq!(price(json!(999.99)).unwrap().to_string(), "999.99");
    for bad in [json!(1000.01), json!(-1), json!(0.001), json!("5"), json!(0.1234567890123456)] {
        assert!(price(bad.clone()).is_err(), "{bad}");
    }
}

#[test]
fn the_schema_is_the_parser() {
    let schema = serde_json::to_value(<Body as utoipa::PartialSchema>::schema()).unwrap();
    assert_eq!(schema["required"], json!(["name", "shade"]));
    assert_eq!(schema["properties"]["name"]["maxLength"], 10);
    assert_eq!(schema["properties"]["name"]["description"], "The display name");
    assert_eq!(schema["properties"]["shade"]["oneOf"][0]["$ref"], "#/components/schemas/Shade");
    assert_eq!(schema["properties"]["parentId"]["type"], json!(["string", "null"]));
    assert_eq!(schema["properties"]["type"]["$ref"], "#/components/schemas/Shade");
    assert_eq!(schema["properties"]["items"]["maxItems"], 2);
    assert_eq!(schema["properties"]["due"]["format"], "date");
    assert_eq!(schema["examples"][0]["shade"], "dark");
    assert_eq!(schema["description"], "A body with one field of every slot kind");
    let mut named = Vec::new();
    <Body as utoipa::ToSchema>::schemas(&mut named);
    let names: Vec<_> = named.iter().map(|(n, _)| n.as_str()).collect();
    assert!(names.contains(&"Item") && names.contains(&"Shade") && names.contains(&"Language"), "{names:?}");
}

#[test]
fn languages_are_iso_639_1() {
    assert_eq!(Language::CODES.len(), 184);
    assert!(Language::CODES.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(Language::parse("DE").map(Language::code), Some("de"));
    assert_eq!(Language::parse("deu"), None, "ISO 639-2 is not 639-1");
}

/// A body whose list needs an item and whose amount must be above 0.
#[derive(Debug, Input)]
struct Order {
    lines: NonEmptyList<Text<1, 5>, 3>,
    amount: PositiveDecimal<100, 2>,
}

#[test]
fn lower_bounds_are_read_and_documented_alike() {
    let order = |lines: Value, amount: Value| parse::<Order>(&json!({"lines": lines, "amount": amount}));
    let least = order(json!(["a"]), json!(0.01)).unwrap();
    assert_eq!((least.lines.0.len(), least.amount.0.to_string()), (1, "0.01".to_owned()));
    let refused = order(json!([]), json!(0)).unwrap_err().errors;
    assert_eq!(refused["lines"], ["lines must hold at least one item"]);
    assert_eq!(refused["amount"], ["amount must be a number above 0, at most 100"]);
    assert!(order(json!(["a", "b", "c", "d"]), json!(100)).is_err(), "MAX still holds");

    let schema = serde_json::to_value(<Order as utoipa::PartialSchema>::schema()).unwrap();
    assert_eq!(
        (&schema["properties"]["lines"]["minItems"], &schema["properties"]["lines"]["maxItems"]),
        (&json!(1), &json!(3))
    );
    assert_eq!(schema["properties"]["amount"]["exclusiveMinimum"], json!(0));
    assert!(schema["properties"]["amount"].get("minimum").is_none(), "{schema}");
}
