"""Writing small packages for the CoCoder tests."""


def write_package(root, files):
    """Write {relative path: source} under ``root`` and return the package folder."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / next(iter(files)).split("/")[0]
