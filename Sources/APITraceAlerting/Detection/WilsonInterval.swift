import Foundation

/// The Wilson score interval of a binomial proportion: how low the true failure ratio could
/// plausibly be given `failures` out of `trials`.
///
/// With 3 failures out of 4 requests the observed ratio is 75%, but at 95% confidence the
/// lower bound is 30%; with 300 out of 400 it is 70.5%. Alerting requires the lower bound to
/// clear the threshold so a handful of requests cannot page.
package enum WilsonInterval {
    /// The lower bound of the two-sided interval at `confidence` (e.g. 0.95).
    package static func lowerBound(failures: Double, trials: Double, confidence: Double) -> Double {
        guard trials > 0 else { return 0 }
        let p = min(1, max(0, failures / trials))
        let z = normalQuantile(1 - (1 - confidence) / 2)
        let z2 = z * z
        let center = p + z2 / (2 * trials)
        let margin = z * ((p * (1 - p) + z2 / (4 * trials)) / trials).squareRoot()
        return max(0, (center - margin) / (1 + z2 / trials))
    }

    /// The standard normal quantile (Acklam's rational approximation, relative error below 1.2e-9).
    package static func normalQuantile(_ p: Double) -> Double {
        precondition(p > 0 && p < 1, "a quantile needs 0 < p < 1")
        let a = [-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02, 1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00]
        let b = [-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01, -1.328068155288572e+01]
        let c = [-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00, -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00]
        let d = [7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00]
        let low = 0.02425
        if p < low {
            let q = (-2 * log(p)).squareRoot()
            return (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) / ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1)
        }
        if p > 1 - low { return -normalQuantile(1 - p) }
        let q = p - 0.5, r = q * q
        return (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q / (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1)
    }
}
