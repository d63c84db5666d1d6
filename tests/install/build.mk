# rxdp as a host installs it (root; 77 otherwise):
#  install.sh  make install into a DESTDIR (the tree checked file by file),
#              then into a prefix where it runs: the unit verified, the man
#              pages rendered, and rxdp run from the installed files only as
#              rxdp.service runs it (its capabilities, readiness over
#              $NOTIFY_SOCKET), a pingpong through the installed libraries
#  deb.sh      dpkg-buildpackage -us -uc from a clean copy of the tree;
#              lintian finds no error or warning; what the package holds
TESTS += tests/install/install.sh tests/install/deb.sh
