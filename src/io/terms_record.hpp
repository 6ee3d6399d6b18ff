#pragma once
// The record of a run's user terms (user_terms.hpp) in its run file: /parameters/terms/<k> (k = 000,
// 001, ... in the order the terms are added) with the attributes name, kind, params (a JSON object),
// digest, rows (0/1), library and symbol, and the dataset `source` of a Python callable whose source
// text was known.
#include "io/h5.hpp"
#include "normdyn/config.hpp"

namespace normdyn {

void write_terms_record(h5::Group& parameters, const RunConfig& config);
// Appends to config.terms the recorded terms that the configuration's text does not hold (all but
// the [[terms]] libraries), without their callbacks.
void read_terms_record(const h5::Group& parameters, RunConfig& config);

}  // namespace normdyn
