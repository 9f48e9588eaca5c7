//! Query tests: hand cases for the grammar, errors, NaN and gates; property tests for the
//! printer (print/parse round trip) and for evaluation (plans and gates against a naive
//! evaluator written here, independent of the library's).

use proptest::prelude::*;

use super::*;
use crate::measure::{EMPTY_VALUES, Metric, MetricSet, Values};

fn p(s: &str) -> Expr {
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

fn err(s: &str) -> QueryError {
    s.parse::<Expr>().unwrap_err()
}

fn vals(pairs: &[(Metric, f64)]) -> Values {
    let mut v = EMPTY_VALUES;
    for &(m, x) in pairs {
        v[m.index()] = x;
    }
    v
}

fn c(m: Metric, op: CmpOp, value: f64) -> Expr {
    Expr::Cmp(Clause {
        metric: m,
        op,
        value,
    })
}

#[test]
fn precedence_and_printing() {
    use Metric::*;
    let (a, b, d) = (
        c(Components, CmpOp::Le, 3.0),
        c(FloorFraction, CmpOp::Ge, 0.55),
        c(Boundary, CmpOp::Lt, 900.0),
    );
    let not = |e: Expr| Expr::Not(Box::new(e));
    assert_eq!(
        p("!components<=3 && floor_fraction>=0.55 || boundary<900"),
        Expr::Or(vec![Expr::And(vec![not(a.clone()), b.clone()]), d.clone()])
    );
    assert_eq!(
        p("components<=3 || floor_fraction >= 0.55 && boundary< 900"),
        Expr::Or(vec![a.clone(), Expr::And(vec![b.clone(), d.clone()])])
    );
    let nested = p("components<=3 && (floor_fraction>=.55 && boundary<9e2)");
    assert_eq!(
        nested,
        Expr::And(vec![a.clone(), Expr::And(vec![b.clone(), d.clone()])])
    );
    assert_eq!(
        nested.to_string(),
        "components<=3 && (floor_fraction>=0.55 && boundary<900)"
    );
    assert_eq!(p("((components<=3))"), a);
    assert_eq!(p("!!components<=3"), not(not(a.clone())));
    assert_eq!(
        p("!(components<=3 || boundary<900)").to_string(),
        "!(components<=3 || boundary<900)"
    );
    assert_eq!(
        p("(a_b_c)".replace("a_b_c", "components<=-1.5").as_str()).to_string(),
        "components<=-1.5"
    );
    assert_eq!(
        p("(components<=3 || boundary<900) && floor_fraction>=0.55").to_string(),
        "(components<=3 || boundary<900) && floor_fraction>=0.55"
    );
}

#[test]
fn errors_name_the_column() {
    let e = err("components<=3 &&");
    assert_eq!(e.column, 17, "{e}");
    assert!(e.to_string().contains("column 17"), "{e}");
    assert!(e.to_string().contains("end of the query"), "{e}");
    assert!(!e.to_string().contains('\n'));
    for (q, col, needle) in [
        ("floor>0.5", 1, "unknown metric \"floor\""),
        ("components 3", 12, "comparison operator"),
        ("components=3", 11, "use \"==\""),
        ("components=<3", 11, "use \"==\""),
        ("components<<3", 12, "expected a number"),
        ("components<=three", 13, "expected a number"),
        ("components<=", 13, "expected a number"),
        ("components<=NaN", 13, "expected a number"),
        ("components<=inf", 13, "expected a number"),
        ("components<=1e999", 13, "not a finite number"),
        ("components<=3x", 13, "not a number"),
        ("components<=1.2.3", 13, "not a number"),
        ("(components<=3", 15, "close the \"(\" at column 1"),
        ("components<=3)", 14, "without a matching"),
        ("components<=3 boundary<2", 15, "expected \"&&\", \"||\""),
        ("components<=3 & boundary<2", 15, "single \"&\""),
        ("components<=3 | boundary<2", 15, "single \"|\""),
        ("components<=3 and boundary<2", 15, "expected \"&&\""),
        ("not components<=3", 1, "write \"!\" instead of \"not\""),
        ("components<=3 && && x", 18, "after \"&&\""),
        ("()", 2, "after \"(\""),
        ("components<=3 # x", 15, "unexpected character '#'"),
        ("  ", 0, "empty query"),
        ("", 0, "empty query"),
        ("fun=components<=3", 0, "named gate"),
    ] {
        let e = err(q);
        assert_eq!(e.column, col, "{q:?}: {e}");
        assert!(e.to_string().contains(needle), "{q:?}: {e}");
    }
    // Deep nesting is an error, not a stack overflow.
    let deep = format!("{}components<=3{}", "(".repeat(5000), ")".repeat(5000));
    assert!(err(&deep).to_string().contains("nested deeper"));
    let deep = format!("{}components<=3", "!".repeat(5000));
    assert!(err(&deep).to_string().contains("nested deeper"));
}

#[test]
fn nan_fails_every_comparison_but_not_equal() {
    let v = EMPTY_VALUES;
    for op in ["<", "<=", ">", ">=", "=="] {
        assert!(!p(&format!("path_length{op}5")).eval(&v), "{op}");
        assert!(p(&format!("!(path_length{op}5)")).eval(&v), "{op}");
    }
    assert!(p("path_length!=5").eval(&v));
    let g: Gate = "path_length<50".parse().unwrap();
    let r = g.eval(&v);
    assert!(!r.pass() && r.failed(0));
}

#[test]
fn gates_share_one_clause_table() {
    let g = Gate::new(
        [
            "components<=3 || boundary<900",
            "fun=!(components<=3) && min_width>=2",
            "components <= 3.0",
            "open=floor_fraction>=0.6",
        ]
        .map(|s| s.parse::<GateArg>().unwrap()),
    )
    .unwrap();
    let names: Vec<String> = g.clauses().iter().map(|c| c.to_string()).collect();
    assert_eq!(
        names,
        [
            "components<=3",
            "boundary<900",
            "min_width>=2",
            "floor_fraction>=0.6"
        ]
    );
    assert_eq!(g.named().len(), 2);
    assert_eq!(g.named()[0].0, "fun");
    assert_eq!(
        g.to_string(),
        "(components<=3 || boundary<900) && components<=3"
    );
    assert_eq!(
        g.args().iter().map(|a| a.to_string()).collect::<Vec<_>>(),
        [
            "(components<=3 || boundary<900) && components<=3",
            "fun=!components<=3 && min_width>=2",
            "open=floor_fraction>=0.6"
        ]
    );
    // Rebuilding from the canonical arguments gives the same gate.
    assert_eq!(
        Gate::new(g.args().iter().map(|a| a.to_string().parse().unwrap())).unwrap(),
        g
    );
    // components 5 (false), boundary 100 (true): main gate fails on its second conjunct;
    // "fun" holds when min_width >= 2.
    let v = vals(&[
        (Metric::Components, 5.0),
        (Metric::Boundary, 100.0),
        (Metric::MinWidth, 2.0),
        (Metric::FloorFraction, 0.7),
    ]);
    let r = g.eval(&v);
    assert!(!r.pass());
    assert_eq!(r.failed, 0b0001);
    assert!(r.named_pass(0) && r.named_pass(1));
    // A pass with a false clause: || makes "failed" mean "was false".
    let v = vals(&[(Metric::Components, 2.0), (Metric::Boundary, 1000.0)]);
    let r = g.eval(&v);
    assert!(r.pass() && r.failed(1) && !r.failed(0));
    assert!(!r.named_pass(0));
    // No unnamed gate: every cave passes.
    let only_named: Gate = "x=components<=1".parse().unwrap();
    assert!(only_named.eval(&EMPTY_VALUES).pass());
    assert!(!only_named.eval(&EMPTY_VALUES).named_pass(0));
    assert_eq!(Gate::default().eval(&EMPTY_VALUES).failed, 0);
}

#[test]
fn gate_arguments() {
    let a: GateArg = "fun-maps = components<=3".parse().unwrap();
    assert_eq!(a.name.as_deref(), Some("fun-maps"));
    // A metric name before "=" is a mistyped "==".
    let e = "components=3".parse::<GateArg>().unwrap_err();
    assert!(e.to_string().contains("use \"==\""), "{e}");
    // Errors inside a named gate point into the whole argument.
    let e = "open=floor_fraction>=".parse::<GateArg>().unwrap_err();
    assert_eq!(e.column, 22, "{e}");
    assert!(e.query.starts_with("open="));
    let twice = Gate::new(["a=components<=1", "a=components<=2"].map(|s| s.parse().unwrap()));
    assert!(twice.unwrap_err().to_string().contains("defined twice"));
    // Several unnamed gates AND together and print flat, as before the query language.
    let g = Gate::all(&[
        "components<=3".parse().unwrap(),
        "min_width>=2 && boundary<100".parse().unwrap(),
    ])
    .unwrap();
    assert_eq!(
        g.to_string(),
        "components<=3 && min_width>=2 && boundary<100"
    );
    assert_eq!(
        g.metrics(),
        MetricSet::EMPTY
            .with(Metric::Components)
            .with(Metric::MinWidth)
            .with(Metric::Boundary)
    );
    // 65 distinct clauses are too many; 65 copies of one are one clause.
    let many: Vec<String> = (0..65).map(|i| format!("boundary<{i}")).collect();
    let e = many.join(" && ").parse::<Gate>().unwrap_err();
    assert!(e.to_string().contains("65 distinct clauses"), "{e}");
    let same = vec!["boundary<1"; 65].join(" || ");
    assert_eq!(same.parse::<Gate>().unwrap().clauses().len(), 1);
}

#[test]
fn plans_compute_only_what_decides() {
    use Metric::*;
    let q = p("path_length<40 && components<=3 && floor_fraction>=0.6");
    let plan = QueryPlan::new(&q, &Costs::estimated(), &[]);
    assert_eq!(
        plan.ordered_expr().to_string(),
        "floor_fraction>=0.6 && components<=3 && path_length<40"
    );
    let mut asked = Vec::new();
    let v = vals(&[(FloorFraction, 0.5), (Components, 1.0), (PathLength, 10.0)]);
    assert!(!plan.matches(|m| {
        asked.push(m);
        v[m.index()]
    }));
    assert_eq!(asked, [FloorFraction]);
    // An || stops at its first true child; its cheap child goes first.
    let q = p("path_length<40 || floor_fraction>=0.6");
    let plan = QueryPlan::new(&q, &Costs::estimated(), &[]);
    let mut asked = Vec::new();
    let v = vals(&[(FloorFraction, 0.7)]);
    assert!(plan.matches(|m| {
        asked.push(m);
        v[m.index()]
    }));
    assert_eq!(asked, [FloorFraction]);
    // A clause that (on the sample) never decides goes after a costlier one that does.
    let sample: Vec<Values> = (0..100)
        .map(|i| vals(&[(FloorFraction, 0.9), (Boundary, i as f64)]))
        .collect();
    let q = p("floor_fraction>=0.5 && boundary<10");
    let plan = QueryPlan::new(&q, &Costs::estimated(), &sample);
    assert_eq!(
        plan.ordered_expr().to_string(),
        "boundary<10 && floor_fraction>=0.5"
    );
    let info = plan.order();
    assert_eq!(info[0].pass_rate, Some(0.1));
    assert_eq!(info[1].reached, Some(0.1));
    assert_eq!(info[1].pass_rate, Some(1.0));
}

// ---------------------------------------------------------------- property tests

fn arb_clause() -> impl Strategy<Value = Clause> {
    let value = prop_oneof![
        (-2i32..8).prop_map(f64::from),
        (0u32..=20).prop_map(|k| k as f64 / 20.0),
        any::<f64>().prop_filter("finite", |v| v.is_finite()),
    ];
    (0..Metric::COUNT, 0..6usize, value).prop_map(|(m, op, value)| Clause {
        metric: Metric::ALL[m],
        op: CmpOp::ALL[op],
        value,
    })
}

fn arb_expr() -> impl Strategy<Value = Expr> {
    arb_clause()
        .prop_map(Expr::Cmp)
        .prop_recursive(5, 40, 4, |inner| {
            prop_oneof![
                inner.clone().prop_map(|e| Expr::Not(Box::new(e))),
                prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::And),
                prop::collection::vec(inner, 2..4).prop_map(Expr::Or),
            ]
        })
}

/// Values near the clause constants (small integers, twentieths), or NaN.
fn arb_values() -> impl Strategy<Value = Values> {
    prop::array::uniform9(prop_oneof![
        Just(f64::NAN),
        (-2i32..8).prop_map(f64::from),
        (0u32..=20).prop_map(|k| k as f64 / 20.0),
    ])
}

/// A printer that adds redundant parentheses and spaces where they do not matter, and
/// parentheses around same-operator children (which nest the tree: fine, the property is about
/// whatever tree the text parses to).
fn noisy(e: &Expr, bits: &mut impl Iterator<Item = bool>) -> String {
    let mut b = || bits.next().unwrap_or(false);
    let s = match e {
        Expr::Cmp(c) => {
            let sp = if b() { " " } else { "" };
            format!("{}{sp}{}{sp}{}", c.metric.name(), c.op.as_str(), c.value)
        }
        Expr::Not(x) => {
            let inner = noisy(x, bits);
            format!("!({inner})")
        }
        Expr::And(k) | Expr::Or(k) => {
            let op = if matches!(e, Expr::And(_)) {
                "&&"
            } else {
                "||"
            };
            k.iter()
                .map(|x| format!("({})", noisy(x, bits)))
                .collect::<Vec<_>>()
                .join(&format!(" {op}\t"))
        }
    };
    if bits.next().unwrap_or(false) {
        format!("( {s} )")
    } else {
        s
    }
}

fn naive_cmp(c: &Clause, v: &Values) -> bool {
    let x = v[c.metric.index()];
    if x.is_nan() {
        return c.op == CmpOp::Ne;
    }
    match c.op {
        CmpOp::Lt => x < c.value,
        CmpOp::Le => x <= c.value,
        CmpOp::Gt => x > c.value,
        CmpOp::Ge => x >= c.value,
        CmpOp::Eq => x == c.value,
        CmpOp::Ne => x != c.value,
    }
}

/// Evaluate every node, no short-circuit.
fn naive(e: &Expr, v: &Values) -> bool {
    match e {
        Expr::Cmp(c) => naive_cmp(c, v),
        Expr::Not(x) => !naive(x, v),
        Expr::And(k) => k.iter().map(|x| naive(x, v)).fold(true, |a, b| a & b),
        Expr::Or(k) => k.iter().map(|x| naive(x, v)).fold(false, |a, b| a | b),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn print_then_parse_is_the_same_tree(e in arb_expr()) {
        let text = e.to_string();
        prop_assert_eq!(parse(&text).unwrap(), e, "{}", text);
    }

    #[test]
    fn any_spelling_round_trips(e in arb_expr(), bits in prop::collection::vec(any::<bool>(), 64)) {
        let text = noisy(&e, &mut bits.into_iter());
        let t = parse(&text).unwrap();
        prop_assert_eq!(parse(&t.to_string()).unwrap(), t.clone(), "{}", text);
        // Redundant parentheses and spaces never change the meaning.
        let v = EMPTY_VALUES;
        prop_assert_eq!(naive(&t, &v), naive(&e, &v));
    }

    #[test]
    fn plans_and_gates_evaluate_like_a_naive_evaluator(
        e in arb_expr(),
        values in prop::collection::vec(arb_values(), 1..8),
        sample in prop::collection::vec(arb_values(), 0..12),
        costs in prop::array::uniform9(1.0f64..10_000.0),
    ) {
        let plan = QueryPlan::new(&e, &Costs { ns: costs }, &sample);
        let gate: Gate = Gate::new([GateArg { name: None, expr: e.clone() }]).unwrap();
        let named = Gate::new([GateArg { name: Some("n".into()), expr: e.clone() }]).unwrap();
        let metrics = e.metrics();
        for v in &values {
            let want = naive(&e, v);
            let mut asked = MetricSet::EMPTY;
            let got = plan.matches(|m| {
                asked.insert(m);
                v[m.index()]
            });
            prop_assert_eq!(got, want, "{}", e);
            prop_assert!(metrics.union(asked) == metrics, "asked for a metric outside the query");
            prop_assert_eq!(e.eval(v), want);
            let r = gate.eval(v);
            prop_assert_eq!(r.pass(), want);
            prop_assert_eq!(named.eval(v).named_pass(0), want);
            prop_assert!(named.eval(v).pass());
            for (i, c) in gate.clauses().iter().enumerate() {
                prop_assert_eq!(r.failed(i), !naive_cmp(c, v));
            }
            // The reordered tree is the same query.
            prop_assert_eq!(naive(&plan.ordered_expr(), v), want);
        }
        // Distinct clauses: each appears once in the table and in the plan's order.
        let leaves = e.leaves();
        for c in gate.clauses() {
            prop_assert!(leaves.iter().any(|l| l.same(c)));
        }
        for (i, a) in gate.clauses().iter().enumerate() {
            for b in &gate.clauses()[i + 1..] {
                prop_assert!(!a.same(b));
            }
        }
        prop_assert_eq!(plan.order().len(), gate.clauses().len());
    }
}
