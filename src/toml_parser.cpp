// The compiled part of toml++, built once here (the other files include its headers with
// TOML_HEADER_ONLY=0) instead of linking libtomlplusplus.so.
#define TOML_IMPLEMENTATION
#include <toml++/toml.h>
