# The fleet manager: one image, two services (`--role api` and `--role worker`, see docker-compose.yml).
# Node 26, the current LTS line and the one CI runs the suite on besides the machine's: at 10,000 boards its worker
# spends half the CPU per poll that Node 20's did (docs/benchmarks.md), and its AsyncLocalStorage (every job and request
# runs in one) costs no promise hooks.
FROM node:26-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
COPY libs/board-api/package.json libs/board-api/
COPY libs/fleet-api/package.json libs/fleet-api/
COPY apps/cli/package.json apps/cli/
COPY apps/agent/package.json apps/agent/
COPY prisma prisma
COPY prisma.config.ts ./
# Dependency install scripts are denied by allowScripts; ours (postinstall) runs `prisma generate` offline.
RUN npm ci --no-audit --no-fund
COPY tsconfig*.json ./
COPY libs libs
COPY apps/agent apps/agent
COPY apps/console apps/console
COPY src src
RUN npm run build && npm prune --omit=dev --ignore-scripts

FROM node:26-bookworm-slim
# Two glibc malloc arenas instead of one per thread: V8's compiler and GC threads and libuv's pool each kept an arena
# of freed memory (~25 MiB of the idle API process; docs/benchmarks.md).
# A young generation of 2 × 16 MiB instead of Node 26's 2 × 32 MiB: the worker at 10,000 boards stays under 300 MiB
# for a few more scavenges (docs/benchmarks.md, issue 19); docker-compose.yml gives the api role 2 × 8 MiB. Kept in
# step with test/support/fleet-process.ts.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=3000 MALLOC_ARENA_MAX=2 NODE_OPTIONS=--max-semi-space-size=16
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules node_modules
COPY --from=build /app/libs/board-api/package.json libs/board-api/
COPY --from=build /app/libs/board-api/dist libs/board-api/dist
COPY --from=build /app/apps/agent/package.json apps/agent/
COPY --from=build /app/apps/agent/dist apps/agent/dist
COPY --from=build /app/dist dist
COPY --from=build /app/prisma prisma
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["--role", "all"]
