"""chlo -> stablehlo for the error functions and bessel_i1e in f64, with the double-precision
approximations `chlo-legalize-to-stablehlo` (and XLA) use there:

- `erf`: Cephes' x T(x^2) / U(x^2) for |x| < 1, else 1 - erfc(x);
- `erfc`: Cephes' exp(-x^2) P(|x|) / Q(|x|) for |x| in [1, 8) and exp(-x^2) R(|x|) / S(|x|)
  beyond, 0 once -x^2 < -maxlog, 2 - erfc(-x) for negative x; 1 - erf(x) for |x| < 1;
- `erf_inv`: Giles' double-precision polynomials in w = -log1p(-x^2) (below 6.25, below 16,
  above), +-inf at +-1;
- `bessel_i1e`: Cephes' full Chebyshev series (29 and 25 terms).
"""
from __future__ import annotations

from ...ir import types as T
from ..rewriter import RewritePattern
from .build import all_static, short_name
from .chlo_decompositions import Formulas
from .chlo_special_functions import bessel_i1e, horner
from .hlo_decompositions import HloBuilder

_MAXLOG = 7.09782712893383996843e2
_ERFC_P = (2.46196981473530512524e-10, 5.64189564831068821977e-1, 7.46321056442269912687e0,
           4.86371970985681366614e1, 1.96520832956077098242e2, 5.26445194995477358631e2,
           9.34528527171957607540e2, 1.02755188689515710272e3, 5.57535335369399327526e2)
_ERFC_Q = (1.0, 1.32281951154744992508e1, 8.67072140885989742329e1, 3.54937778887819891062e2,
           9.75708501743205489753e2, 1.82390916687909736289e3, 2.24633760818710981792e3,
           1.65666309194161350182e3, 5.57535340817727675546e2)
_ERFC_R = (5.64189583547755073984e-1, 1.27536670759978104416e0, 5.01905042251180477414e0,
           6.16021097993053585195e0, 7.40974269950448939160e0, 2.97886665372100240670e0)
_ERFC_S = (1.0, 2.26052863220117276590e0, 9.39603524938001434673e0, 1.20489539808096656605e1,
           1.70814450747565897222e1, 9.60896809063285878198e0, 3.36907645100081516050e0)
_ERF_T = (9.60497373987051638749e0, 9.00260197203842689217e1, 2.23200534594684319226e3,
          7.00332514112805075473e3, 5.55923013010394962768e4)
_ERF_U = (1.0, 3.35617141647503099647e1, 5.21357949780152679795e2, 4.59432382970980127987e3,
          2.26290000613890934246e4, 4.92673942608635921086e4)
_W_BELOW_6_25 = (-3.6444120640178196996e-21, -1.685059138182016589e-19, 1.2858480715256400167e-18,
                 1.115787767802518096e-17, -1.333171662854620906e-16, 2.0972767875968561637e-17,
                 6.6376381343583238325e-15, -4.0545662729752068639e-14, -8.1519341976054721522e-14,
                 2.6335093153082322977e-12, -1.2975133253453532498e-11, -5.4154120542946279317e-11,
                 1.051212273321532285e-09, -4.1126339803469836976e-09, -2.9070369957882005086e-08,
                 4.2347877827932403518e-07, -1.3654692000834678645e-06, -1.3882523362786468719e-05,
                 0.0001867342080340571352, -0.00074070253416626697512, -0.0060336708714301490533,
                 0.24015818242558961693, 1.6536545626831027356)
_W_BELOW_16 = (2.2137376921775787049e-09, 9.0756561938885390979e-08, -2.7517406297064545428e-07,
               1.8239629214389227755e-08, 1.5027403968909827627e-06, -4.013867526981545969e-06,
               2.9234449089955446044e-06, 1.2475304481671778723e-05, -4.7318229009055733981e-05,
               6.8284851459573175448e-05, 2.4031110387097893999e-05, -0.0003550375203628474796,
               0.00095328937973738049703, -0.0016882755560235047313, 0.0024914420961078508066,
               -0.0037512085075692412107, 0.005370914553590063617, 1.0052589676941592334, 3.0838856104922207635)
_W_ABOVE_16 = (-2.7109920616438573243e-11, -2.5556418169965252055e-10, 1.5076572693500548083e-09,
               -3.7894654401267369937e-09, 7.6157012080783393804e-09, -1.4960026627149240478e-08,
               2.9147953450901080826e-08, -6.7711997758452339498e-08, 2.2900482228026654717e-07,
               -9.9298272942317002539e-07, 4.5260625972231537039e-06, -1.9681778105531670567e-05,
               7.5995277030017761139e-05, -0.00021503011930044477347, -0.00013871931833623122026,
               1.0103004648645343977, 4.8499064014085844221)
_I1E_A = (2.77791411276104639959e-18, -2.11142121435816608115e-17, 1.55363195773620046921e-16,
          -1.10559694773538630805e-15, 7.60068429473540693410e-15, -5.04218550472791168711e-14,
          3.22379336594557470981e-13, -1.98397439776494371520e-12, 1.17361862988909016308e-11,
          -6.66348972350202774223e-11, 3.62559028155211703701e-10, -1.88724975172282928790e-9,
          9.38153738649577178388e-9, -4.44505912879632808065e-8, 2.00329475355213526229e-7,
          -8.56872026469545474066e-7, 3.47025130813767847674e-6, -1.32731636560394358279e-5,
          4.78156510755005422638e-5, -1.61760815825896745588e-4, 5.12285956168575772895e-4,
          -1.51357245063125314899e-3, 4.15642294431288815669e-3, -1.05640848946261981558e-2,
          2.47264490306265168283e-2, -5.29459812080949914269e-2, 1.02643658689847095384e-1,
          -1.76416518357834055153e-1, 2.52587186443633654823e-1)
_I1E_B = (7.51729631084210481353e-18, 4.41434832307170791151e-18, -4.65030536848935832153e-17,
          -3.20952592199342395980e-17, 2.96262899764595013876e-16, 3.30820231092092828324e-16,
          -1.88035477551078244854e-15, -3.81440307243700780478e-15, 1.04202769841288027642e-14,
          4.27244001671195135429e-14, -2.10154184277266431302e-14, -4.08355111109219731823e-13,
          -7.19855177624590851209e-13, 2.03562854414708950722e-12, 1.41258074366137813316e-11,
          3.25260358301548823856e-11, -1.89749581235054123450e-11, -5.58974346219658380687e-10,
          -3.83538038596423702205e-9, -2.63146884688951950684e-8, -2.51223623787020892529e-7,
          -3.88256480887769039346e-6, -1.10588938762623716291e-4, -9.76109749136146840777e-3,
          7.78576235018280120474e-1)


def _erf_near_zero(f: Formulas, x):
    square = f.multiply(x, x)
    return f.divide(f.multiply(x, horner(f, square, _ERF_T)), horner(f, square, _ERF_U))


def _erfc_tail(f: Formulas, x):
    ax = f.abs(x)
    z = f.negate(f.multiply(x, x))
    e = f.exponential(z)
    middle = f.divide(f.multiply(e, horner(f, ax, _ERFC_P)), horner(f, ax, _ERFC_Q))
    far = f.divide(f.multiply(e, horner(f, ax, _ERFC_R)), horner(f, ax, _ERFC_S))
    out = f.select(f.compare("LT", ax, f.c(8.0)), middle, far)
    out = f.select(f.compare("LT", z, f.c(-_MAXLOG)), f.c(0.0), out)
    return f.select(f.compare("LT", x, f.c(0.0)), f.subtract(f.c(2.0), out), out)


def _erf(f: Formulas, x):
    near = f.compare("LT", f.abs(x), f.c(1.0))
    return f.select(near, _erf_near_zero(f, x), f.subtract(f.c(1.0), _erfc_tail(f, x)))


def _erfc(f: Formulas, x):
    near = f.compare("LT", f.abs(x), f.c(1.0))
    return f.select(near, f.subtract(f.c(1.0), _erf_near_zero(f, x)), _erfc_tail(f, x))


def _erf_inv(f: Formulas, x):
    w = f.negate(f.log_plus_one(f.multiply(x, f.negate(x))))
    below_6_25, below_16 = f.compare("LT", w, f.c(6.25)), f.compare("LT", w, f.c(16.0))

    def coefficient(i: int):
        c = f.c(_W_BELOW_6_25[i])
        if i < len(_W_BELOW_16):
            c = f.select(below_6_25, c, f.c(_W_BELOW_16[i]))
        if i < len(_W_ABOVE_16):
            c = f.select(below_16, c, f.c(_W_ABOVE_16[i]))
        return c
    root = f.sqrt(w)
    w = f.select(below_6_25, f.subtract(w, f.c(3.125)),
                 f.subtract(root, f.select(below_16, f.c(3.25), f.c(5.0))))
    p = coefficient(0)
    for i in range(1, len(_W_BELOW_6_25)):
        step = f.add(coefficient(i), f.multiply(p, w))
        if i >= len(_W_BELOW_16):
            p = f.select(below_6_25, step, p)
        elif i >= len(_W_ABOVE_16):
            p = f.select(below_16, step, p)
        else:
            p = step
    edge = f.compare("EQ", f.abs(x), f.c(1.0))
    return f.select(edge, f.multiply(x, f.c(float("inf"))), f.multiply(p, x))


_FUNCTIONS = {"erf": _erf, "erfc": _erfc, "erf_inv": _erf_inv, "bessel_i1e": lambda f, x: bessel_i1e(f, x, _I1E_A, _I1E_B)}


class ErrorFunctionsF64(RewritePattern):
    ops = tuple(f"chlo.{name}" for name in _FUNCTIONS)

    def match_and_rewrite(self, op, rw) -> bool:
        t = op.results[0].type
        if len(op.operands) != 1 or not all_static(t) or t.element != T.f64:
            return False
        rw.replace_op(op, [_FUNCTIONS[short_name(op)](Formulas(HloBuilder(rw, op), t), op.operand("operand"))])
        return True


PATTERNS = [ErrorFunctionsF64()]
