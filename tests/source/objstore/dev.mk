# The object-store module's own build, until the tree builds source/ (issue 23): its .c files and
# tests compiled against the main tree's static library (base symbols) and libcurl.
#
#   cmake -S . -B build && cmake --build build -j2 --target ingot_static
#   make -f tests/source/objstore/dev.mk -j2 [BUILD=build] [OUT=dir SAN=-fsanitize=...]
#
# The include roots hold only include/, base/ and source/ (links under $(OUT)/layers), as the
# layer rule allows: a file of the module that includes runtime/, shard/ or transport/ fails here.
TOP   := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))/../../..)
BUILD ?= $(TOP)/build
OUT   ?= $(BUILD)/objstore-dev
SRC   := $(TOP)/source/objstore
TST   := $(TOP)/tests/source/objstore

# The libraries libingot.a needs, as cmake linked the shared library.
INGOT_LIBS := $(shell tr ' ' '\n' < $(BUILD)/CMakeFiles/ingot.dir/link.txt | \
                grep -E '^(-l[a-z]|/.*\.(so|a)$$|-Wl,-rpath)' | tr '\n' ' ')

CC      ?= cc
OPT     ?= -O2 -g
SAN     ?=
CFLAGS  := $(OPT) $(SAN) -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wshadow -Wstrict-prototypes \
           -Wno-unused-parameter -Werror -fPIC -fvisibility=hidden -pthread
LIBINC  := -I$(TOP)/include -I$(BUILD)/include -I$(OUT)/layers
TESTINC := $(LIBINC) -I$(TOP)/tests/unit -I$(TST)
LDLIBS  := -Wl,--as-needed $(BUILD)/libingot.a $(INGOT_LIBS) $(shell pkg-config --libs libcurl) -lpthread -lm

LIB_SRCS  := $(wildcard $(SRC)/*.c)
LIB_OBJS  := $(patsubst $(SRC)/%.c,$(OUT)/lib/%.o,$(LIB_SRCS))
TESTS     := $(patsubst $(TST)/%.c,$(OUT)/%,$(wildcard $(TST)/test_*.c))
ITS       := $(patsubst $(TST)/%.c,$(OUT)/%,$(wildcard $(TST)/it_*.c))
PERF      := $(if $(wildcard $(TOP)/tests/perf/objstore_get.c),$(OUT)/objstore_get)

all: $(TESTS) $(ITS) $(PERF)

$(OUT)/layers/.stamp:
	mkdir -p $(OUT)/layers $(OUT)/lib
	ln -sfn $(TOP)/base $(OUT)/layers/base
	ln -sfn $(TOP)/source $(OUT)/layers/source
	touch $@

$(OUT)/lib/%.o: $(SRC)/%.c $(wildcard $(SRC)/*.h) $(OUT)/layers/.stamp
	$(CC) $(CFLAGS) -DINGOT_BUILDING_LIBRARY $(LIBINC) -c $< -o $@

$(OUT)/libobjstore.a: $(LIB_OBJS)
	rm -f $@ && ar rcs $@ $^

# The config table's object is linked whole: its constructor registers INGOT_S3_*.
$(OUT)/test_%: $(TST)/test_%.c $(OUT)/libobjstore.a $(wildcard $(TST)/*.h) $(BUILD)/libingot.a
	$(CC) $(CFLAGS) $(TESTINC) $< $(OUT)/lib/objstore_config.o $(OUT)/libobjstore.a $(LDLIBS) -o $@

$(OUT)/it_%: $(TST)/it_%.c $(OUT)/libobjstore.a $(wildcard $(TST)/*.h) $(BUILD)/libingot.a
	$(CC) $(CFLAGS) $(TESTINC) $< $(OUT)/lib/objstore_config.o $(OUT)/libobjstore.a $(LDLIBS) -o $@

$(PERF): $(TOP)/tests/perf/objstore_get.c $(OUT)/libobjstore.a $(BUILD)/libingot.a
	$(CC) $(CFLAGS) $(TESTINC) $< $(OUT)/lib/objstore_config.o $(OUT)/libobjstore.a $(LDLIBS) -o $@

clean:
	rm -rf $(OUT)

.PHONY: all clean
