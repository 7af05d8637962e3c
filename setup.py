"""Builds the parser's optional compiled passes (corpora/wikitext_speedups.pyx); everything else is in
pyproject.toml. Without Cython or a C compiler the package installs as pure Python and runs the same."""
from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # an sdist built without Cython: the pure-Python parser is used
    extensions = []
else:
    extensions = cythonize(
        [Extension("corpora.wikitext_speedups", ["corpora/wikitext_speedups.pyx"], optional=True)],
        language_level=3,
    )

setup(ext_modules=extensions)
