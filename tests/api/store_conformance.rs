//! One conformance suite for every store backend: the same calls must mean the same thing on
//! the embedded store and on DynamoDB (Local).

use api_tests::{Backend, backends};
use serde_json::{Value, json};
use std::sync::Arc;
use uuid::Uuid;
use workapi_store::entity::{self, IndexKey};
use workapi_store::*;

/// A partition no other test touches.
fn fresh_pk() -> String {
    format!("TEST#{}", Uuid::new_v4())
}

fn item(pk: &str, sk: &str, extra: Value) -> Item {
    let mut item = extra.as_object().cloned().unwrap_or_default();
    item.insert(PK.into(), pk.into());
    item.insert(SK.into(), sk.into());
    item.insert(ENTITY.into(), "Test".into());
    item
}

fn past() -> i64 {
    workapi_store::clock::now_epoch() - 10
}

async fn each(test: impl AsyncFn(&Backend)) {
    for backend in backends().await {
        test(&backend).await;
    }
}

#[tokio::test]
async fn values_round_trip_unchanged() {
    each(async |b| {
        let pk = fresh_pk();
        let extra = json!({
            "s": "text with ünïcode and #hash", "empty": "", "int": 42, "neg": -7, "big": 9007199254740993i64,
            "float": 12.25, "t": true, "f": false, "nothing": null,
            "list": [1, "two", {"three": [3]}], "map": {"a": {"b": null}}
        });
        let written = item(&pk, "A", extra);
        b.store.put(written.clone(), Condition::None).await.unwrap();
        let read = b.store.get(&Key::new(&pk, "A")).await.unwrap().expect("item");
        assert_eq!(read, written, "[{}]", b.name);
        assert_eq!(b.store.get(&Key::new(&pk, "B")).await.unwrap(), None, "[{}]", b.name);
    })
    .await;
}

#[tokio::test]
async fn eventually_consistent_reads_answer_like_consistent_ones_once_written() {
    each(async |b| {
        let pk = fresh_pk();
        let written = item(&pk, "A", json!({"n": 1}));
        b.store.put(written.clone(), Condition::None).await.unwrap();
        b.store.put(item(&pk, "B", json!({})), Condition::None).await.unwrap();
        // DynamoDB Local, like the embedded store, answers an eventual read from the latest
        // write; on DynamoDB it may lag by about a second, which the callers accept.
        assert_eq!(b.store.get_eventually(&Key::new(&pk, "A")).await.unwrap(), Some(written), "[{}]", b.name);
        assert_eq!(b.store.get_eventually(&Key::new(&pk, "Z")).await.unwrap(), None, "[{}]", b.name);
        let page = b.store.query(Query::table(&pk).eventually_consistent()).await.unwrap();
        assert_eq!(page.items.len(), 2, "[{}]", b.name);
    })
    .await;
}

#[tokio::test]
async fn malformed_items_are_refused() {
    each(async |b| {
        let mut no_entity = item(&fresh_pk(), "A", json!({}));
        no_entity.remove(ENTITY);
        assert!(matches!(b.store.put(no_entity, Condition::None).await, Err(StoreError::Invalid(_))), "[{}]", b.name);
        let key = Key::new(fresh_pk(), "A");
        let change_pk = Update::default().set(PK, "other");
        assert!(matches!(b.store.update(&key, change_pk, Condition::None).await, Err(StoreError::Invalid(_))));
    })
    .await;
}

#[tokio::test]
async fn put_conditions() {
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        s.put(item(&pk, "A", json!({"v": 1})), Condition::NotExists).await.unwrap();
        let again = s.put(item(&pk, "A", json!({"v": 2})), Condition::NotExists).await;
        assert!(matches!(again, Err(StoreError::ConditionFailed)), "[{}] {again:?}", b.name);
        assert_eq!(s.get(&Key::new(&pk, "A")).await.unwrap().unwrap()["v"], 1, "[{}] loser wrote nothing", b.name);
        let missing = s.put(item(&pk, "B", json!({})), Condition::Exists).await;
        assert!(matches!(missing, Err(StoreError::ConditionFailed)), "[{}]", b.name);
        s.put(item(&pk, "A", json!({"v": 3})), Condition::Exists).await.unwrap();
        assert_eq!(s.get(&Key::new(&pk, "A")).await.unwrap().unwrap()["v"], 3);
    })
    .await;
}

#[tokio::test]
async fn update_creates_changes_and_checks_versions() {
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        let key = Key::new(&pk, "A");
        let exists = s.update(&key, Update::default().set("x", 1), Condition::Exists).await;
        assert!(matches!(exists, Err(StoreError::ConditionFailed)), "[{}] update with Exists on nothing", b.name);
        let created = s
            .update(&key, Update::default().set(ENTITY, "Test").set(VERSION, 1).set("x", 1), Condition::None)
            .await
            .unwrap();
        assert_eq!(created["x"], 1, "[{}]", b.name);
        assert_eq!(created[PK], pk.as_str());
        let stale = s.update(&key, Update::default().set("x", 2).set(VERSION, 2), Condition::VersionEquals(0)).await;
        assert!(matches!(stale, Err(StoreError::ConditionFailed)), "[{}]", b.name);
        let updated = s
            .update(&key, Update::default().set("x", 2).set(VERSION, 2).remove("nope"), Condition::VersionEquals(1))
            .await;
        assert_eq!(updated.unwrap()["x"], 2, "[{}]", b.name);
        let removed = s.update(&key, Update::default().remove("x"), Condition::Exists).await.unwrap();
        assert!(!removed.contains_key("x"), "[{}]", b.name);
        assert_eq!(removed[VERSION], 2);
    })
    .await;
}

#[tokio::test]
async fn delete_returns_the_old_item_and_honours_conditions() {
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        let key = Key::new(&pk, "A");
        s.put(item(&pk, "A", json!({"version": 5})), Condition::None).await.unwrap();
        let refused = s.delete(&key, Condition::VersionEquals(4)).await;
        assert!(matches!(refused, Err(StoreError::ConditionFailed)), "[{}]", b.name);
        let old = s.delete(&key, Condition::VersionEquals(5)).await.unwrap().expect("old item");
        assert_eq!(old[VERSION], 5);
        assert_eq!(s.get(&key).await.unwrap(), None, "[{}]", b.name);
        assert_eq!(s.delete(&key, Condition::None).await.unwrap(), None, "[{}] deleting nothing", b.name);
    })
    .await;
}

#[tokio::test]
async fn query_orders_by_utf8_bytes_and_filters_sort_keys() {
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        // Byte order: uppercase before lowercase, multi-byte characters last.
        for sk in ["b#2", "a#1", "B#0", "a#2", "é#0", "a#10"] {
            s.put(item(&pk, sk, json!({})), Condition::None).await.unwrap();
        }
        let sks = |page: Page| page.items.iter().map(|i| i[SK].as_str().unwrap().to_owned()).collect::<Vec<_>>();
        let all = s.query(Query::table(&pk)).await.unwrap();
        assert_eq!(sks(all), ["B#0", "a#1", "a#10", "a#2", "b#2", "é#0"], "[{}]", b.name);
        let back = s.query(Query::table(&pk).backward()).await.unwrap();
        assert_eq!(sks(back), ["é#0", "b#2", "a#2", "a#10", "a#1", "B#0"], "[{}]", b.name);
        let prefixed = s.query(Query::table(&pk).begins_with("a#1")).await.unwrap();
        assert_eq!(sks(prefixed), ["a#1", "a#10"], "[{}]", b.name);
        let between = s.query(Query::table(&pk).sk(SortKey::Between("a#10".into(), "b#2".into()))).await.unwrap();
        assert_eq!(sks(between), ["a#10", "a#2", "b#2"], "[{}]", b.name);
        let equal = s.query(Query::table(&pk).sk(SortKey::Equals("a#2".into()))).await.unwrap();
        assert_eq!(sks(equal), ["a#2"], "[{}]", b.name);
        assert!(s.query(Query::table(fresh_pk())).await.unwrap().items.is_empty());
    })
    .await;
}

#[tokio::test]
async fn pagination_visits_every_item_once() {
    each(async |b| {
        let pk = fresh_pk();
        for i in 0..23 {
            b.store.put(item(&pk, &format!("I#{i:03}"), json!({"i": i})), Condition::None).await.unwrap();
        }
        for forward in [true, false] {
            let mut seen = Vec::new();
            let mut after = None;
            loop {
                let mut query = Query::table(&pk).limit(5).after(after);
                query.forward = forward;
                let page = b.store.query(query).await.unwrap();
                assert!(page.items.len() <= 5, "[{}]", b.name);
                seen.extend(page.items.iter().map(|i| i["i"].as_i64().unwrap()));
                match page.next {
                    Some(next) => after = Some(next),
                    None => break,
                }
            }
            let mut expected: Vec<i64> = (0..23).collect();
            if !forward {
                expected.reverse();
            }
            assert_eq!(seen, expected, "[{}] forward={forward}", b.name);
        }
    })
    .await;
}

#[tokio::test]
async fn query_all_follows_every_page() {
    each(async |b| {
        let pk = fresh_pk();
        for i in 0..12 {
            b.store.put(item(&pk, &format!("I#{i:02}"), json!({})), Condition::None).await.unwrap();
        }
        let all = query_all(b.store.as_ref(), Query::table(&pk).limit(5)).await.unwrap();
        assert_eq!(all.len(), 12, "[{}]", b.name);
    })
    .await;
}

#[tokio::test]
async fn gsi1_holds_only_items_with_both_index_keys() {
    each(async |b| {
        let (pk, gsi) = (fresh_pk(), fresh_pk());
        let s = &b.store;
        s.put(item(&pk, "1", json!({"GSI1PK": gsi, "GSI1SK": "b"})), Condition::None).await.unwrap();
        s.put(item(&pk, "2", json!({"GSI1PK": gsi, "GSI1SK": "a"})), Condition::None).await.unwrap();
        s.put(item(&pk, "3", json!({"GSI1PK": gsi})), Condition::None).await.unwrap();
        let other = fresh_pk();
        s.put(item(&other, "9", json!({"GSI1PK": gsi, "GSI1SK": "c"})), Condition::None).await.unwrap();
        let page = s.query(Query::gsi1(&gsi)).await.unwrap();
        let sks: Vec<_> = page.items.iter().map(|i| i[SK].as_str().unwrap()).collect();
        assert_eq!(sks, ["2", "1", "9"], "[{}]", b.name);
        let mut seen = Vec::new();
        let mut after = None;
        loop {
            let page = s.query(Query::gsi1(&gsi).limit(1).after(after)).await.unwrap();
            seen.extend(page.items.iter().map(|i| i[SK].as_str().unwrap().to_owned()));
            match page.next {
                Some(next) => after = Some(next),
                None => break,
            }
        }
        assert_eq!(seen, ["2", "1", "9"], "[{}] paginated index", b.name);
    })
    .await;
}

/// The list index (GSI2) orders by its sort key in byte order, and a query starts after any
/// place built from keys (`entity::index_start`), whether or not an item is there: what a
/// page's cursor does (docs/conventions.md#paging).
#[tokio::test]
async fn gsi2_lists_in_sort_key_order_from_any_start() {
    each(async |b| {
        let (pk, list) = (fresh_pk(), fresh_pk());
        let s = &b.store;
        // "host" + U+0001 sorts before "host plus": a prefix first, as the API's order says.
        for (sk, place) in
            [("1", "host plus\u{1}1"), ("2", "host\u{1}2"), ("3", "\u{e4}rger\u{1}3"), ("4", "zebra\u{1}4")]
        {
            s.put(item(&pk, sk, json!({"GSI2PK": list, "GSI2SK": place})), Condition::None).await.unwrap();
        }
        s.put(item(&pk, "5", json!({"GSI2PK": list})), Condition::None).await.unwrap();
        let sks = |page: workapi_store::Page| -> Vec<String> {
            page.items.iter().map(|i| i[SK].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(sks(s.query(Query::gsi2(&list)).await.unwrap()), ["2", "1", "4", "3"], "[{}]", b.name);
        // After "host plus" (its item deleted meanwhile: the start is keys, not an item).
        s.delete(&Key::new(&pk, "1"), Condition::None).await.unwrap();
        let at = IndexKey { pk: list.clone(), sk: "host plus\u{1}1".into() };
        let start = entity::index_start(Index::Gsi2, &Key::new(&pk, "1"), at);
        let rest = s.query(Query::gsi2(&list).after(Some(start))).await.unwrap();
        assert_eq!(sks(rest), ["4", "3"], "[{}] from a deleted item's place", b.name);
    })
    .await;
}

#[tokio::test]
async fn expired_items_are_invisible_and_count_as_absent() {
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        s.put(item(&pk, "old", json!({"ttl": past()})), Condition::None).await.unwrap();
        s.put(item(&pk, "live", json!({"ttl": past() + 3600})), Condition::None).await.unwrap();
        assert_eq!(s.get(&Key::new(&pk, "old")).await.unwrap(), None, "[{}]", b.name);
        let listed = s.query(Query::table(&pk)).await.unwrap();
        assert_eq!(listed.items.len(), 1, "[{}]", b.name);
        assert_eq!(listed.items[0][SK], "live");
        s.put(item(&pk, "old", json!({"fresh": true})), Condition::NotExists).await.unwrap();
        assert_eq!(s.get(&Key::new(&pk, "old")).await.unwrap().unwrap()["fresh"], true, "[{}]", b.name);
        let expired_exists = s.put(item(&pk, "gone", json!({"ttl": past()})), Condition::None).await;
        expired_exists.unwrap();
        let cond = s.update(&Key::new(&pk, "gone"), Update::default().set("x", 1), Condition::Exists).await;
        assert!(matches!(cond, Err(StoreError::ConditionFailed)), "[{}] Exists on an expired item", b.name);
    })
    .await;
}

/// The idempotency record's conditions: an attribute holding a string (the claim's nonce), an
/// attribute absent (no response yet), and both together, in single writes and transactions,
/// with "an expired item is absent" as everywhere.
#[tokio::test]
async fn attribute_conditions_mean_the_same_on_every_backend() {
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        let equals = |value: &str| Condition::Equals { attr: "claim".into(), value: value.into() };
        let lacks = || Condition::Lacks("response".into());
        let failed = |r: StoreResult<Item>| matches!(r, Err(StoreError::ConditionFailed));
        s.put(item(&pk, "r", json!({"claim": "n1", "ttl": past() + 3600})), Condition::None).await.unwrap();
        let key = Key::new(&pk, "r");
        // Equals: the attribute holds exactly the string.
        assert!(failed(s.update(&key, Update::default().set("x", 1), equals("n2")).await), "[{}]", b.name);
        assert!(failed(s.update(&key, Update::default().set("x", 1), equals("N1")).await), "[{}]", b.name);
        s.update(&key, Update::default().set("x", 1), equals("n1")).await.unwrap();
        // Equals on a missing item or attribute fails, and creates nothing.
        let missing = Key::new(&pk, "missing");
        assert!(failed(s.update(&missing, Update::default().set("x", 1), equals("n1")).await), "[{}]", b.name);
        assert_eq!(s.get(&missing).await.unwrap(), None, "[{}]", b.name);
        let other = Condition::Equals { attr: "nope".into(), value: "n1".into() };
        assert!(failed(s.update(&key, Update::default().set("x", 2), other).await), "[{}]", b.name);
        // A number is not the string of its digits.
        s.put(item(&pk, "num", json!({"claim": 7})), Condition::None).await.unwrap();
        let seven = s.update(&Key::new(&pk, "num"), Update::default().set("x", 1), equals("7")).await;
        assert!(failed(seven), "[{}]", b.name);
        // Lacks: holds while the attribute is absent, and on an absent item.
        s.update(&key, Update::default().set("y", 1), lacks()).await.unwrap();
        s.update(&key, Update::default().set("response", json!({"status": 201})), Condition::None).await.unwrap();
        assert!(failed(s.update(&key, Update::default().set("y", 2), lacks()).await), "[{}]", b.name);
        assert_eq!(s.delete(&Key::new(&pk, "absent"), lacks()).await.unwrap(), None, "[{}]", b.name);
        // A null attribute is present.
        s.put(item(&pk, "null", json!({"response": null})), Condition::None).await.unwrap();
        assert!(failed(s.update(&Key::new(&pk, "null"), Update::default().set("y", 1), lacks()).await));
        // All: every condition, as the record's release uses them.
        let release = |nonce: &str| Condition::All(vec![equals(nonce), lacks()]);
        let kept = s.delete(&key, release("n1")).await;
        assert!(matches!(kept, Err(StoreError::ConditionFailed)), "[{}] a record holding a response stays", b.name);
        s.put(item(&pk, "f", json!({"claim": "n1"})), Condition::None).await.unwrap();
        let flight = Key::new(&pk, "f");
        assert!(matches!(s.delete(&flight, release("n2")).await, Err(StoreError::ConditionFailed)), "[{}]", b.name);
        assert!(s.delete(&flight, release("n1")).await.unwrap().is_some(), "[{}] in flight and ours", b.name);
        s.put(item(&pk, "e", json!({})), Condition::All(vec![])).await.unwrap();
        // An expired item is absent: Equals fails on it, Lacks holds.
        s.put(item(&pk, "old", json!({"claim": "n1", "response": 1, "ttl": past()})), Condition::None).await.unwrap();
        let old = Key::new(&pk, "old");
        assert!(failed(s.update(&old, Update::default().set("x", 1), equals("n1")).await), "[{}] expired", b.name);
        s.put(item(&pk, "old", json!({"fresh": true})), lacks()).await.unwrap();
        // In a transaction, a failing attribute condition cancels everything and is named.
        s.put(item(&pk, "t", json!({"claim": "n1"})), Condition::None).await.unwrap();
        let result = s
            .transact(vec![
                TxOp::Put { item: item(&pk, "created", json!({})), cond: Condition::NotExists },
                TxOp::Update {
                    key: Key::new(&pk, "t"),
                    update: Update::default().set("response", 1),
                    cond: equals("n2"),
                },
            ])
            .await;
        match result {
            Err(StoreError::TransactionCancelled { failed }) => assert_eq!(failed, vec![1], "[{}]", b.name),
            other => panic!("[{}] expected a cancelled transaction, got {other:?}", b.name),
        }
        assert_eq!(s.get(&Key::new(&pk, "created")).await.unwrap(), None, "[{}]", b.name);
        s.transact(vec![
            TxOp::Put { item: item(&pk, "created", json!({})), cond: Condition::NotExists },
            TxOp::Update { key: Key::new(&pk, "t"), update: Update::default().set("response", 1), cond: equals("n1") },
        ])
        .await
        .unwrap_or_else(|e| panic!("[{}] {e:?}", b.name));
        assert_eq!(s.get(&Key::new(&pk, "t")).await.unwrap().unwrap()["response"], 1, "[{}]", b.name);
    })
    .await;
}

#[tokio::test]
async fn a_transaction_with_one_failing_condition_writes_nothing() {
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        s.put(item(&pk, "taken", json!({"version": 1})), Condition::None).await.unwrap();
        s.put(item(&pk, "doomed", json!({})), Condition::None).await.unwrap();
        let result = s
            .transact(vec![
                TxOp::Put { item: item(&pk, "new", json!({})), cond: Condition::NotExists },
                TxOp::Update {
                    key: Key::new(&pk, "other"),
                    update: Update::default().set("x", 1),
                    cond: Condition::None,
                },
                TxOp::Delete { key: Key::new(&pk, "doomed"), cond: Condition::None },
                TxOp::Put { item: item(&pk, "taken", json!({})), cond: Condition::NotExists },
            ])
            .await;
        match result {
            Err(StoreError::TransactionCancelled { failed }) => assert_eq!(failed, vec![3], "[{}]", b.name),
            other => panic!("[{}] expected a cancelled transaction, got {other:?}", b.name),
        }
        assert_eq!(s.get(&Key::new(&pk, "new")).await.unwrap(), None, "[{}]", b.name);
        assert_eq!(s.get(&Key::new(&pk, "other")).await.unwrap(), None, "[{}]", b.name);
        assert!(s.get(&Key::new(&pk, "doomed")).await.unwrap().is_some(), "[{}]", b.name);
        assert_eq!(s.get(&Key::new(&pk, "taken")).await.unwrap().unwrap()[VERSION], 1);
    })
    .await;
}

#[tokio::test]
async fn a_successful_transaction_writes_everything() {
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        s.put(item(&pk, "check", json!({"version": 7})), Condition::None).await.unwrap();
        s.put(item(&pk, "del", json!({})), Condition::None).await.unwrap();
        s.transact(vec![
            TxOp::Check { key: Key::new(&pk, "check"), cond: Condition::VersionEquals(7) },
            TxOp::Put { item: item(&pk, "p", json!({"a": 1})), cond: Condition::NotExists },
            TxOp::Update {
                key: Key::new(&pk, "u"),
                update: Update::default().set(ENTITY, "Test").set("b", 2),
                cond: Condition::None,
            },
            TxOp::Delete { key: Key::new(&pk, "del"), cond: Condition::Exists },
        ])
        .await
        .unwrap_or_else(|e| panic!("[{}] {e:?}", b.name));
        assert_eq!(s.get(&Key::new(&pk, "p")).await.unwrap().unwrap()["a"], 1);
        assert_eq!(s.get(&Key::new(&pk, "u")).await.unwrap().unwrap()["b"], 2);
        assert_eq!(s.get(&Key::new(&pk, "del")).await.unwrap(), None, "[{}]", b.name);
    })
    .await;
}

#[tokio::test]
async fn updates_add_to_numbers_in_and_out_of_transactions() {
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        s.put(item(&pk, "c", json!({"n": 10, "m": 1})), Condition::None).await.unwrap();
        // With a set beside it, and on an attribute that is absent (counted from 0).
        let after = s
            .update(
                &Key::new(&pk, "c"),
                Update::default().add("n", -4).add("fresh", 3).set("x", "y"),
                Condition::Exists,
            )
            .await
            .unwrap_or_else(|e| panic!("[{}] {e:?}", b.name));
        assert_eq!((after["n"].as_i64(), after["fresh"].as_i64(), after["x"].as_str()), (Some(6), Some(3), Some("y")));
        // In a transaction, under a counter condition: applied while it holds, all or nothing.
        let give_back = |limit| TxOp::Update {
            key: Key::new(&pk, "c"),
            update: Update::default().add("n", 5),
            cond: Condition::CounterBelow { attr: "n".into(), limit },
        };
        let delete = |sk: &str| TxOp::Delete { key: Key::new(&pk, sk), cond: Condition::Exists };
        s.put(item(&pk, "d", json!({})), Condition::None).await.unwrap();
        s.transact(vec![delete("d"), give_back(7)]).await.unwrap_or_else(|e| panic!("[{}] {e:?}", b.name));
        let c = s.get(&Key::new(&pk, "c")).await.unwrap().unwrap();
        assert_eq!((c["n"].as_i64(), c["m"].as_i64()), (Some(11), Some(1)), "[{}]", b.name);
        assert_eq!(s.get(&Key::new(&pk, "d")).await.unwrap(), None, "[{}]", b.name);
        // The delete's condition fails (gone already): nothing is added.
        let again = s.transact(vec![delete("d"), give_back(100)]).await;
        assert!(
            matches!(again, Err(StoreError::TransactionCancelled { ref failed }) if failed == &[0]),
            "[{}] {again:?}",
            b.name
        );
        assert_eq!(s.get(&Key::new(&pk, "c")).await.unwrap().unwrap()["n"].as_i64(), Some(11), "[{}]", b.name);
    })
    .await;
}

#[tokio::test]
async fn a_transaction_may_not_name_an_item_twice() {
    each(async |b| {
        let pk = fresh_pk();
        let twice = b
            .store
            .transact(vec![
                TxOp::Put { item: item(&pk, "x", json!({})), cond: Condition::None },
                TxOp::Delete { key: Key::new(&pk, "x"), cond: Condition::None },
            ])
            .await;
        assert!(twice.is_err(), "[{}]", b.name);
        assert_eq!(b.store.get(&Key::new(&pk, "x")).await.unwrap(), None, "[{}]", b.name);
    })
    .await;
}

#[tokio::test]
async fn counters_start_from_init_and_stop_at_a_limit() {
    each(async |b| {
        let pk = fresh_pk();
        let key = Key::new(&pk, "C");
        let init = item(&pk, "C", json!({"ttl": past() + 3600}));
        let below = || Condition::CounterBelow { attr: "n".into(), limit: 3 };
        for expected in 1..=3 {
            assert_eq!(b.store.increment(&key, "n", 1, init.clone(), below()).await.unwrap(), expected, "[{}]", b.name);
        }
        let over = b.store.increment(&key, "n", 1, init.clone(), below()).await;
        assert!(matches!(over, Err(StoreError::ConditionFailed)), "[{}] {over:?}", b.name);
        let stored = b.store.get(&key).await.unwrap().unwrap();
        assert_eq!(stored["n"], 3, "[{}]", b.name);
        assert_eq!(stored[ENTITY], "Test", "[{}] init attributes kept", b.name);
        assert_eq!(b.store.increment(&key, "n", 5, init, Condition::None).await.unwrap(), 8);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_conditional_writes_of_one_key_have_exactly_one_winner() {
    each(async |b| {
        let pk = fresh_pk();
        let attempts = (0..24).map(|i| {
            let store: Arc<dyn Store> = b.store.clone();
            let pk = pk.clone();
            tokio::spawn(
                async move { store.put(item(&pk, "unique", json!({"writer": i})), Condition::NotExists).await },
            )
        });
        let results = futures::future::join_all(attempts).await;
        let wins: Vec<_> = results.into_iter().map(|r| r.expect("task")).collect();
        let ok = wins.iter().filter(|r| r.is_ok()).count();
        let lost = wins.iter().filter(|r| matches!(r, Err(StoreError::ConditionFailed))).count();
        assert_eq!((ok, lost), (1, 23), "[{}] {wins:?}", b.name);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_transactions_claiming_one_guard_have_exactly_one_winner() {
    each(async |b| {
        let pk = fresh_pk();
        let attempts = (0..16).map(|i| {
            let store: Arc<dyn Store> = b.store.clone();
            let pk = pk.clone();
            tokio::spawn(async move {
                store
                    .transact(vec![
                        TxOp::Put { item: item(&pk, "GUARD", json!({"owner": i})), cond: Condition::NotExists },
                        TxOp::Put { item: item(&pk, &format!("ROW#{i}"), json!({})), cond: Condition::NotExists },
                    ])
                    .await
            })
        });
        let results: Vec<_> = futures::future::join_all(attempts).await.into_iter().map(|r| r.expect("task")).collect();
        assert_eq!(results.iter().filter(|r| r.is_ok()).count(), 1, "[{}] {results:?}", b.name);
        let rows = b.store.query(Query::table(&pk).begins_with("ROW#")).await.unwrap();
        assert_eq!(rows.items.len(), 1, "[{}] losers wrote nothing", b.name);
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn parallel_increments_lose_nothing() {
    each(async |b| {
        let pk = fresh_pk();
        let tasks = (0..30).map(|_| {
            let store: Arc<dyn Store> = b.store.clone();
            let pk = pk.clone();
            tokio::spawn(async move {
                let init = item(&pk, "C", json!({}));
                store.increment(&Key::new(&pk, "C"), "n", 1, init, Condition::None).await.unwrap()
            })
        });
        let mut values: Vec<i64> = futures::future::join_all(tasks).await.into_iter().map(|r| r.unwrap()).collect();
        values.sort();
        assert_eq!(values, (1..=30).collect::<Vec<_>>(), "[{}] each increment saw a distinct value", b.name);
    })
    .await;
}

/// DynamoDB's limits (`workapi_store::limits`) hold on every backend, refused with the same
/// typed error and nothing written: an item over 400 KB, whether put whole or grown by an
/// update (in or out of a transaction), and a transaction over 4 MB.
#[tokio::test]
async fn items_over_400_kb_and_transactions_over_4_mb_are_refused_on_every_backend() {
    let kb = |n: usize| "x".repeat(n * 1024);
    each(async |b| {
        let pk = fresh_pk();
        let s = &b.store;
        fn too_large<T>(r: &StoreResult<T>) -> bool {
            matches!(r, Err(StoreError::TooLarge { .. }))
        }
        s.put(item(&pk, "fits", json!({"text": kb(399)})), Condition::None).await.unwrap();
        let over = s.put(item(&pk, "over", json!({"text": kb(401)})), Condition::None).await;
        assert!(too_large(&over), "[{}] a put of 401 KB: {over:?}", b.name);
        assert_eq!(s.get(&Key::new(&pk, "over")).await.unwrap(), None, "[{}]", b.name);

        s.put(item(&pk, "grows", json!({"text": kb(300), "version": 1})), Condition::None).await.unwrap();
        let grown = s.update(&Key::new(&pk, "grows"), Update::default().set("more", kb(150)), Condition::None).await;
        assert!(too_large(&grown), "[{}] an update to 450 KB: {grown:?}", b.name);
        let in_tx = s
            .transact(vec![
                TxOp::Put { item: item(&pk, "beside", json!({})), cond: Condition::None },
                TxOp::Update {
                    key: Key::new(&pk, "grows"),
                    update: Update::default().set("more", kb(150)),
                    cond: Condition::None,
                },
            ])
            .await;
        assert!(too_large(&in_tx), "[{}] a transaction growing an item to 450 KB: {in_tx:?}", b.name);
        let kept = s.get(&Key::new(&pk, "grows")).await.unwrap().unwrap();
        assert!(!kept.contains_key("more"), "[{}] the item is unchanged", b.name);
        assert_eq!(s.get(&Key::new(&pk, "beside")).await.unwrap(), None, "[{}] nothing of the transaction", b.name);

        let eleven = (0..11)
            .map(|i| TxOp::Put { item: item(&pk, &format!("t{i}"), json!({"text": kb(390)})), cond: Condition::None });
        let heavy = s.transact(eleven.collect()).await;
        assert!(too_large(&heavy), "[{}] a transaction of 4.2 MB: {heavy:?}", b.name);
        assert_eq!(s.get(&Key::new(&pk, "t0")).await.unwrap(), None, "[{}]", b.name);
    })
    .await;
}

/// A query answers at most about 1 MB a page, as DynamoDB does: five items of 300 KB take
/// more than one page, and following the cursor reads every one once.
#[tokio::test]
async fn a_query_page_ends_after_about_1_mb() {
    each(async |b| {
        let pk = fresh_pk();
        for i in 0..5 {
            b.store
                .put(item(&pk, &format!("i{i}"), json!({"text": "x".repeat(300 * 1024)})), Condition::None)
                .await
                .unwrap();
        }
        let first = b.store.query(Query::table(&pk)).await.unwrap();
        assert!((3..5).contains(&first.items.len()), "[{}] {} items on the first page", b.name, first.items.len());
        assert!(first.next.is_some(), "[{}] a cursor for the rest", b.name);
        let all = query_all(b.store.as_ref(), Query::table(&pk)).await.unwrap();
        let keys: Vec<&str> = all.iter().map(|i| i[SK].as_str().unwrap()).collect();
        assert_eq!(keys, ["i0", "i1", "i2", "i3", "i4"], "[{}]", b.name);
    })
    .await;
}
