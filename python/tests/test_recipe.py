"""Recipes: presets, --set overrides as keyword arguments, TOML, and the CLI's error messages."""

import pickle

import pytest

import cavesweep as cs


def test_presets_are_the_command_lines(cli):
    names = cs.presets()
    assert names == ["chapter-strict", "classic-4-5", "nethack-mines", "roguebasin"]
    listing = cli("presets").stdout
    for n in names:
        assert n in listing
        # The same TOML `cavesweep presets NAME` prints.
        assert cs.recipe(n).to_toml().strip() == cli("presets", n).stdout.strip()


def test_overrides_are_the_set_keys():
    assert cs.SET_KEYS == [
        "rows", "cols", "fill", "floor", "steps", "rule", "outside", "border", "update", "rng",
        "spawn", "exit", "connectivity", "post",
    ]
    r = cs.recipe(
        "chapter-strict", rows=50, cols=60, fill=0.5, steps=6, rule="B5678/S45678",
        outside="wrap", border="none", update="inplace-row-major", rng="numpy", spawn=(3, 4),
        exit=(10, 20), connectivity=8, post=["keep-largest", "remove-small 3"],
    )
    assert (r.rows, r.cols, r.shape, r.fill, r.rng) == (50, 60, (50, 60), 0.5, "numpy")
    assert (r.spawn, r.exit, r.connectivity, r.trajectory_len) == ((3, 4), (10, 20), 8, 1 + 6 + 2)
    text = r.to_toml()
    for needle in ['rule = "B5678/S45678"', 'outside = "wrap"', 'update = "inplace-row-major"',
                   "repeat = 6", 'post = ["keep-largest", "remove-small 3"]', "p = 0.5"]:
        assert needle in text, (needle, text)
    # Strings work as on the command line; None clears exit / post.
    s = cs.recipe("chapter-strict", spawn="3,4", post="keep-largest+remove-small 3", exit="10,20",
                  fill="0.5", rows="50", cols=60, steps="6", rule="B5678/S45678", outside="wrap",
                  border="none", update="inplace-row-major", rng="numpy", connectivity="8")
    assert s == r
    assert cs.recipe(exit=None, post=None).exit is None
    n = cs.recipe("nethack-mines", floor=700)
    assert "floor = 700" in n.to_toml()
    # Exact-count fills take `fill` as the wall fraction, as on the command line.
    assert abs(cs.recipe("nethack-mines", fill=0.5).fill - 0.5) < 1e-3


def test_recipe_object():
    r = cs.recipe("classic-4-5")
    assert r == cs.Recipe("classic-4-5") and r != cs.recipe("chapter-strict")
    assert r.replace(steps=9) == cs.recipe("classic-4-5", steps=9)
    assert r.replace() == r and r.replace(steps=9) != r
    assert cs.Recipe.from_toml(r.to_toml()) == r
    assert pickle.loads(pickle.dumps(r)) == r
    assert "classic-4-5" in repr(r) and str(r) == r.to_toml()
    assert r.name == "classic-4-5" and "4-5" in r.about
    with pytest.raises(AttributeError):
        r.rows = 3  # immutable


@pytest.mark.parametrize(
    "key, value",
    [
        ("fill", 1.5), ("fill", "abc"), ("fill", float("nan")), ("rule", "B9/S5"), ("rows", 0),
        ("rows", 100000), ("spawn", (200, 3)), ("steps", -1), ("steps", 200000),
        ("outside", "lava"), ("connectivity", 5), ("post", "explode"), ("post", "remove-small x"),
        ("rng", "mt19937"), ("update", "random"), ("colour", "red"),
    ],
)
def test_bad_overrides_raise_the_command_lines_message(cli, key, value):
    with pytest.raises(ValueError) as e:
        cs.recipe("chapter-strict", **{key: value})
    msg = str(e.value)
    assert "\n" not in msg
    text = ",".join(map(str, value)) if isinstance(value, tuple) else str(value)
    p = cli("run", "--set", f"{key}={text}", check=False)
    assert p.returncode != 0
    # The command line adds its prefix and the flag: "cavesweep: error: --set k=v: <message>".
    assert p.stderr.strip().endswith(msg), (p.stderr, msg)


def test_wrong_types_are_type_errors():
    with pytest.raises(TypeError):
        cs.recipe(fill=True)
    with pytest.raises(TypeError):
        cs.recipe(fill={"a": 1})
    with pytest.raises(TypeError):
        cs.generate(3, 0)
    with pytest.raises(ValueError, match='unknown preset "nethack"; known: chapter-strict'):
        cs.recipe("nethack")


def test_bad_toml_is_a_value_error_with_one_line():
    with pytest.raises(ValueError) as e:
        cs.Recipe.from_toml(cs.recipe().to_toml() + "\ncolour = 1\n")
    assert "colour" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ValueError, match="^pass 1:"):
        cs.Recipe.from_toml(cs.recipe().to_toml().replace("B5678/S5678", "B5678/S9"))
