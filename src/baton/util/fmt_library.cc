// fmt's compiled part, built once into baton_util. Debian 12 ships fmt as
// headers plus a shared library only. Header-only use (FMT_HEADER_ONLY)
// compiled fmt's implementation into each of the ~250 files that include
// <fmt/format.h>, a quarter of each one's compile time under the
// sanitizers; the shared library would cost every CLI call a library load
// (doc/benchmarks.md). So this file compiles the implementation header once
// and instantiates what <fmt/format.h> declares but leaves to the compiled
// library (fmt 9.1: the float and double conversions, the locale access, the
// separators); a missing one is a link error, not a silent fallback.
#include <fmt/format-inl.h>

namespace fmt {
inline namespace v9 {
namespace detail {

template auto dragonbox::to_decimal(float x) noexcept
    -> dragonbox::decimal_fp<float>;
template auto dragonbox::to_decimal(double x) noexcept
    -> dragonbox::decimal_fp<double>;
template locale_ref::locale_ref(const std::locale& loc);
template auto locale_ref::get<std::locale>() const -> std::locale;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<char>;
template auto decimal_point_impl(locale_ref) -> char;
template auto thousands_sep_impl(locale_ref) -> thousands_sep_result<wchar_t>;
template auto decimal_point_impl(locale_ref) -> wchar_t;

}  // namespace detail
}  // namespace v9
}  // namespace fmt
