# The test library's programs:
#  wirecheck     the data checker for the wire (tests/lib/wirecheck.c): a
#                stream of RC, UC or UD messages between two verbs
#                programs, every byte checked at its receiver, every
#                message counted; tests/lib/rxdp.sh's wirecheck_* run it
#  wirecheck.sh  the checker's own test: clean streams of every transport
#                and operation pass, and each way of being wrong on
#                purpose (--sabotage) fails with its count
WIRECHECK := $(BUILD)/tests/lib/wirecheck

$(WIRECHECK): $(OBJ)/tests/lib/wirecheck.o
	$(msg) LD $@
	@mkdir -p $(@D)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< -libverbs

TEST_BINS += $(WIRECHECK)
TESTS += tests/lib/wirecheck.sh
