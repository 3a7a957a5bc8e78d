"""The Python examples of the README files run as written (each file's blocks in order, in one
namespace, in a scratch directory)."""

import os
import pathlib
import re

import pytest

HERE = pathlib.Path(__file__).resolve().parent
READMES = [HERE.parent / "README.md", HERE.parent.parent / "README.md"]


def python_blocks(path):
    return re.findall(r"```python\n(.*?)```", path.read_text(), flags=re.S)


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(HERE.parent.parent)))
def test_readme_examples_run(readme, tmp_path, capsys):
    blocks = python_blocks(readme)
    assert len(blocks) >= 2, f"{readme} has no Python examples"
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        namespace = {}
        for block in blocks:
            exec(compile(block, str(readme), "exec"), namespace)
    finally:
        os.chdir(cwd)
    printed = capsys.readouterr().out
    # the printed results show variants as JSON
    assert '["a"]' in printed
