"""Writes archives quire must refuse, with Python's own zipfile (not the
Rust zip crate quire reads them with), into the directory given.

Each file is named after what is wrong with it; every one but the entry
names is otherwise a real quire archive (`good.zip`, given as argv[2]), so
the refusal is for that one fault.
"""

import stat
import sys
import zipfile
from pathlib import Path


def copy(good, out, extra):
    with zipfile.ZipFile(good) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for item in src.infolist():
            dst.writestr(item, src.read(item))
        extra(dst)


def main(dest, good):
    dest = Path(dest)
    copy(good, dest / "dotdot.zip", lambda z: z.writestr("../escaped.txt", "x"))
    copy(good, dest / "absolute.zip", lambda z: z.writestr("/tmp/absolute.txt", "x"))
    copy(good, dest / "nested-dotdot.zip", lambda z: z.writestr("blobs/../../x", "x"))

    def symlink(z):
        info = zipfile.ZipInfo("blobs/ab/" + "c" * 62)
        info.external_attr = (stat.S_IFLNK | 0o777) << 16
        z.writestr(info, "/etc/passwd")

    copy(good, dest / "symlink.zip", symlink)
    print("bad zips: ok")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
