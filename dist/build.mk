# make install: rxdp on a real host (GNU directory variables; DESTDIR for
# staging, as packages do):
#
#   make install [DESTDIR=/tmp/stage] [PREFIX=/usr] [libdir=...] ...
#
#   $(sbindir)/rxdpd, rxdp-loader       the daemon and the loader (root's)
#   $(bindir)/rxdp-ctl                  anyone's view of rxdpd
#   $(libdir)/rxdp/libibverbs.so.1,     the drop-in libraries, in a
#     librdmacm.so.1                    directory of their own: programs
#                                       use them through LD_LIBRARY_PATH,
#                                       the system's rdma-core stays
#   $(libdir)/rxdp/system/libibverbs.so.1
#                                       a link to the above, alone: the
#                                       directory to name in
#                                       /etc/ld.so.conf.d for rxdp's
#                                       libibverbs system-wide (it hands
#                                       the kernel's devices to rdma-core's;
#                                       its librdmacm keeps wildcard binds
#                                       rxdp's, so it stays out: README)
#   $(libexecdir)/rxdp/rxdp-ifaces      attaches/detaches the configured
#                                       interfaces (rxdp.service)
#   $(unitdir)/rxdp.service             the service (Type=notify)
#   $(unitdir)/run-rxdp-bpffs.mount     the bpffs it needs mounted before
#                                       it starts
#   $(sysconfdir)/rxdp/rxdp.conf        the example configuration (kept if
#                                       one is there: KEEP_CONFIG=0 replaces)
#   $(mandir)/man8/rxdpd.8, rxdp-loader.8, $(mandir)/man1/rxdp-ctl.1
#   $(docdir)/README.md, docs/*.md,     the documents, laid out as in the
#     userspace/*/README.md             tree so that their links hold
#
# make install-system (root, after make install, with the same variables):
# rxdp's libibverbs for every program, /etc/ld.so.conf.d/000-rxdp.conf
# naming $(libdir)/rxdp/system, then ldconfig; make uninstall-system undoes
# it (docs/operating.md).
#
# The unit and the helper name the other files by their installed paths
# (without DESTDIR). The benchmark tools (bench/) are not installed.
PREFIX      ?= /usr/local
prefix      ?= $(PREFIX)
exec_prefix ?= $(prefix)
bindir      ?= $(exec_prefix)/bin
sbindir     ?= $(exec_prefix)/sbin
libdir      ?= $(exec_prefix)/lib
libexecdir  ?= $(exec_prefix)/libexec
datarootdir ?= $(prefix)/share
mandir      ?= $(datarootdir)/man
docdir      ?= $(datarootdir)/doc/rxdp
sysconfdir  ?= $(prefix)/etc
unitdir     ?= $(prefix)/lib/systemd/system
KEEP_CONFIG ?= 1

INSTALL      ?= install
DIST_SUBST    = sed -e 's|@sbindir@|$(sbindir)|g' \
		    -e 's|@bindir@|$(bindir)|g' \
		    -e 's|@libdir@|$(libdir)|g' \
		    -e 's|@libexecdir@|$(libexecdir)|g' \
		    -e 's|@sysconfdir@|$(sysconfdir)|g' \
		    -e 's|@docdir@|$(docdir)|g' \
		    -e 's|@VERSION@|$(RXDP_VERSION)|g'
DIST_MAN     := man8/rxdpd.8 man8/rxdp-loader.8 man1/rxdp-ctl.1
DIST_DOCS    := README.md $(sort $(wildcard docs/*.md)) \
		userspace/daemon/README.md userspace/engine/README.md \
		userspace/verbs/README.md userspace/rdmacm/README.md
LDSO_CONF    := /etc/ld.so.conf.d/000-rxdp.conf

install: all
	$(msg) INSTALL "$(DESTDIR)$(prefix)"
	$(Q)$(INSTALL) -d "$(DESTDIR)$(sbindir)" "$(DESTDIR)$(bindir)" \
		"$(DESTDIR)$(libdir)/rxdp" "$(DESTDIR)$(libexecdir)/rxdp" \
		"$(DESTDIR)$(unitdir)" "$(DESTDIR)$(sysconfdir)/rxdp" \
		"$(DESTDIR)$(mandir)/man8" "$(DESTDIR)$(mandir)/man1"
	$(Q)$(INSTALL) -m 755 $(BIN)/rxdpd $(BIN)/rxdp-loader "$(DESTDIR)$(sbindir)/"
	$(Q)$(INSTALL) -m 755 $(BIN)/rxdp-ctl "$(DESTDIR)$(bindir)/"
	$(Q)$(INSTALL) -m 644 $(LIB)/libibverbs.so.1 $(LIB)/librdmacm.so.1 \
		"$(DESTDIR)$(libdir)/rxdp/"
	$(Q)$(INSTALL) -d "$(DESTDIR)$(libdir)/rxdp/system"
	$(Q)ln -sf ../libibverbs.so.1 "$(DESTDIR)$(libdir)/rxdp/system/libibverbs.so.1"
	$(Q)$(DIST_SUBST) dist/rxdp-ifaces > "$(DESTDIR)$(libexecdir)/rxdp/rxdp-ifaces"
	$(Q)chmod 755 "$(DESTDIR)$(libexecdir)/rxdp/rxdp-ifaces"
	$(Q)$(DIST_SUBST) dist/rxdp.service.in > "$(DESTDIR)$(unitdir)/rxdp.service"
	$(Q)chmod 644 "$(DESTDIR)$(unitdir)/rxdp.service"
	$(Q)$(INSTALL) -m 644 dist/run-rxdp-bpffs.mount "$(DESTDIR)$(unitdir)/"
	$(Q)if [ "$(KEEP_CONFIG)" != 1 ] || [ ! -e "$(DESTDIR)$(sysconfdir)/rxdp/rxdp.conf" ]; then \
		$(INSTALL) -m 644 dist/rxdp.conf "$(DESTDIR)$(sysconfdir)/rxdp/rxdp.conf"; \
	fi
	$(Q)for m in $(DIST_MAN); do \
		$(DIST_SUBST) dist/man/$${m#*/} > "$(DESTDIR)$(mandir)/$$m" && \
		chmod 644 "$(DESTDIR)$(mandir)/$$m" || exit 1; \
	done
	$(Q)for d in $(DIST_DOCS); do \
		$(INSTALL) -d "$(DESTDIR)$(docdir)/$$(dirname $$d)" && \
		$(INSTALL) -m 644 $$d "$(DESTDIR)$(docdir)/$$d" || exit 1; \
	done

install-system:
	$(Q)[ -n "$(DESTDIR)" ] || [ -e "$(libdir)/rxdp/system/libibverbs.so.1" ] || { \
		echo "make install-system: no $(libdir)/rxdp/system/libibverbs.so.1 (make install first, with the same variables)" >&2; \
		exit 1; }
	$(Q)$(INSTALL) -d "$(DESTDIR)$$(dirname $(LDSO_CONF))"
	$(Q)echo "$(libdir)/rxdp/system" > "$(DESTDIR)$(LDSO_CONF)"
	$(Q)chmod 644 "$(DESTDIR)$(LDSO_CONF)"
	$(Q)if [ -z "$(DESTDIR)" ]; then ldconfig; fi
	$(Q)echo "every program now takes rxdp's libibverbs.so.1 ($(libdir)/rxdp/system; undo: make uninstall-system)"

uninstall-system:
	rm -f "$(DESTDIR)$(LDSO_CONF)"
	if [ -z "$(DESTDIR)" ]; then ldconfig; fi

uninstall:
	rm -f "$(DESTDIR)$(sbindir)/rxdpd" "$(DESTDIR)$(sbindir)/rxdp-loader" \
		"$(DESTDIR)$(bindir)/rxdp-ctl" \
		"$(DESTDIR)$(libdir)/rxdp/libibverbs.so.1" \
		"$(DESTDIR)$(libdir)/rxdp/system/libibverbs.so.1" \
		"$(DESTDIR)$(libdir)/rxdp/librdmacm.so.1" \
		"$(DESTDIR)$(libexecdir)/rxdp/rxdp-ifaces" \
		"$(DESTDIR)$(unitdir)/rxdp.service" \
		"$(DESTDIR)$(unitdir)/run-rxdp-bpffs.mount" \
		$(DIST_MAN:%="$(DESTDIR)$(mandir)/%") \
		$(DIST_DOCS:%="$(DESTDIR)$(docdir)/%")
	-rmdir "$(DESTDIR)$(libdir)/rxdp/system" "$(DESTDIR)$(libdir)/rxdp" \
		"$(DESTDIR)$(libexecdir)/rxdp" "$(DESTDIR)$(docdir)/docs" \
		"$(DESTDIR)$(docdir)/userspace/"* "$(DESTDIR)$(docdir)/userspace" \
		"$(DESTDIR)$(docdir)"

.PHONY: install uninstall install-system uninstall-system
