#pragma once
// Slope limiter of the mean-field finite-volume fluxes (meanfield.limiter): van Leer's harmonic mean,
// minmod, or none (first-order upwind).
namespace normdyn {

enum class Limiter { van_leer, minmod, upwind };

}  // namespace normdyn
