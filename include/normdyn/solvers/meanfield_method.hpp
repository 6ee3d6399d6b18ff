#pragma once
// The transport step of the mean field's split step (meanfield.method): the finite volumes of the
// method of lines (explicit SSP-RK3; steps limited by the CFL condition h |v| < cell width), or a
// flux-form semi-Lagrangian step (steps limited by h |∂_φ v| < 1, independent of the grid).
namespace normdyn {

enum class MeanFieldMethod { finite_volume, semi_lagrangian };

}  // namespace normdyn
