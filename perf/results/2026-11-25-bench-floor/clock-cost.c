#include <stdio.h>
#include <time.h>
#include <stdint.h>
#include <x86intrin.h>
int main(){
  struct timespec ts; const int N=20000000; uint64_t s=0;
  struct timespec a,b;
  clock_gettime(CLOCK_MONOTONIC,&a);
  for(int i=0;i<N;i++){clock_gettime(CLOCK_MONOTONIC,&ts); s+=ts.tv_nsec;}
  clock_gettime(CLOCK_MONOTONIC,&b);
  printf("clock_gettime MONOTONIC: %.1f ns\n", ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/N);
  clock_gettime(CLOCK_MONOTONIC,&a);
  for(int i=0;i<N;i++){s+=__rdtsc();}
  clock_gettime(CLOCK_MONOTONIC,&b);
  printf("rdtsc: %.1f ns\n", ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/N);
  unsigned aux;
  clock_gettime(CLOCK_MONOTONIC,&a);
  for(int i=0;i<N;i++){s+=__rdtscp(&aux);}
  clock_gettime(CLOCK_MONOTONIC,&b);
  printf("rdtscp: %.1f ns\n", ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/N);
  clock_gettime(CLOCK_MONOTONIC,&a);
  for(int i=0;i<N;i++){clock_gettime(CLOCK_MONOTONIC_COARSE,&ts); s+=ts.tv_nsec;}
  clock_gettime(CLOCK_MONOTONIC,&b);
  printf("COARSE: %.1f ns\n", ((b.tv_sec-a.tv_sec)*1e9+(b.tv_nsec-a.tv_nsec))/N);
  printf("%lu\n",s&1);
}
