"""An ambient Stratonovich-Heun integration of value noise in numpy, written apart from normdyn: x_i <- normalize(x_i + P_x_i(h m_i + sigma dB m_i)) as predictor, then the average of both increments, retracted; m_i the softmax means (Q = K = V = I), dB a d x d matrix of normals. Usage: value_noise_reference.py START.txt STEPS_PER_UNIT PATHS SEED (beta = 1, sigma = 0.5, T = 1; START one token per line). Prints the mean pairwise cosine at T and its standard error."""
import sys, numpy as np

def run(x0, beta, sigma, h, T, M, seed, batch=20000):
    rng = np.random.default_rng(seed)
    n, d = x0.shape
    steps = int(round(T / h))
    out = []
    def drift_noise(x, db):
        g = np.einsum('mid,mjd->mij', x, x) * beta
        g -= g.max(axis=2, keepdims=True)
        w = np.exp(g); w /= w.sum(axis=2, keepdims=True)
        m = np.einsum('mij,mjd->mid', w, x)
        u = h * m + np.einsum('mab,mib->mia', db, m)
        return u - np.sum(u * x, axis=2, keepdims=True) * x
    done = 0
    while done < M:
        b = min(batch, M - done)
        x = np.broadcast_to(x0, (b, n, d)).copy()
        for k in range(steps):
            db = sigma * np.sqrt(h) * rng.standard_normal((b, d, d))
            a = drift_noise(x, db)
            xt = x + a; xt /= np.linalg.norm(xt, axis=2, keepdims=True)
            c = drift_noise(xt, db)
            x = x + 0.5 * (a + c); x /= np.linalg.norm(x, axis=2, keepdims=True)
        gram = np.einsum('mid,mjd->mij', x, x)
        mc = (gram.sum(axis=(1, 2)) - n) / (n * (n - 1))
        out.append(mc)
        done += b
    v = np.concatenate(out)
    return v.mean(), v.std(ddof=1) / np.sqrt(len(v)), len(v)

if __name__ == '__main__':
    x0 = np.loadtxt(sys.argv[1])
    h = 1.0 / float(sys.argv[2]); M = int(sys.argv[3]); seed = int(sys.argv[4])
    m, se, N = run(x0, 1.0, 0.5, h, 1.0, M, seed)
    print(f"h=1/{sys.argv[2]} M={N}: mean cosine {m:.5f} +- {se:.5f}")
