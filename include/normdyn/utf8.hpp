#pragma once
// Whether text is well-formed UTF-8, as TOML text is: a path that is not (a file name of another
// encoding, which the OS accepts) cannot be stored in a path key of the configuration, whose text
// would replace its bytes (to_toml writes U+FFFD for them).
#include <string_view>

namespace normdyn {

bool is_utf8(std::string_view text);

}  // namespace normdyn
