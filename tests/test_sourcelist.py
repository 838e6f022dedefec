import pytest

from indexer import sourcelist
from indexer.errors import ConfigError
from indexer.sourcelist import SourceSpec


def test_add_load_roundtrip(tmp_path):
    path = tmp_path / "sources.toml"
    assert sourcelist.load(path) == []
    folder = tmp_path / "results"
    folder.mkdir()
    merged = sourcelist.add(path, [SourceSpec(str(folder)), SourceSpec("hub-org:open-llm-leaderboard", limit=5)])
    assert [s.spec for s in merged] == [str(folder.resolve()), "hub-org:open-llm-leaderboard"]
    # adding the same spec again does not duplicate it; a new limit replaces the old
    sourcelist.add(path, [SourceSpec("hub-org:open-llm-leaderboard", limit=9), SourceSpec("hub:org/repo")])
    loaded = sourcelist.load(path)
    assert loaded == [
        SourceSpec(str(folder.resolve())),
        SourceSpec("hub-org:open-llm-leaderboard", limit=9),
        SourceSpec("hub:org/repo"),
    ]
    assert loaded[2].is_hub and not loaded[0].is_hub


@pytest.mark.parametrize(
    "text,match",
    [
        ("[[source]]\nspec = 'hub:noslash'\n", "hub:ORG/REPO"),
        ("[[source]]\nformat = 'table'\n", "needs a 'spec'"),
        ("[[source]]\nspec = '/x'\ncolour = 'red'\n", "unknown key"),
        ("[[source]]\nspec = '/x'\nlimit = 0\n", "positive integer"),
        ("source = [", "not valid TOML"),
    ],
)
def test_bad_config_names_the_file_and_entry(tmp_path, text, match):
    path = tmp_path / "sources.toml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=match) as info:
        sourcelist.load(path)
    assert str(path) in str(info.value)
