use super::*;

fn hosts(names: &[&str]) -> Vec<basalt_config::ClusterHost> {
    names
        .iter()
        .map(|n| basalt_config::ClusterHost::named(n, 0))
        .collect()
}

/// The LIMs are asked from this host, then in the cluster file's order without it
/// again; a host not in the file asks in file order.
#[test]
fn the_local_lim_first_then_the_others_in_file_order() {
    let h = hosts(&["a", "b", "c"]);
    let order: Vec<String> = local_then_all(&h, Some("b".into())).collect();
    assert_eq!(order, ["b", "a", "c"]);
    let order: Vec<String> = local_then_all(&h, None).collect();
    assert_eq!(order, ["a", "b", "c"]);
    // Walked lazily: the first two of a long list without the rest.
    let names: Vec<String> = (0..10_000).map(|i| format!("h{i}")).collect();
    let many = hosts(&names.iter().map(String::as_str).collect::<Vec<_>>());
    let first: Vec<String> = local_then_all(&many, Some("h9999".into()))
        .take(2)
        .collect();
    assert_eq!(first, ["h9999", "h0"]);
}
