"""Builds the parser's optional compiled passes (corpora/wikitext/compiled/*.pyx); everything else is in
pyproject.toml. Without Cython or a C compiler the package installs as pure Python and runs the same
(corpora/wikitext/passes.py)."""
from setuptools import Extension, setup

try:
    from Cython.Build import cythonize
except ImportError:  # a build without Cython: the Python passes run
    extensions = []
else:
    extensions = cythonize(
        [Extension("corpora.wikitext.compiled.*", ["corpora/wikitext/compiled/*.pyx"])], language_level=3, quiet=True
    )
    for extension in extensions:
        extension.optional = True  # a failed compile is a warning, not a failed install (cythonize drops the flag)

setup(ext_modules=extensions)
