// Linux headers Swift's Glibc module does not bring in: the event loop's
// descriptors (epoll, timerfd, signalfd, eventfd).
#ifndef CPLATFORM_H
#define CPLATFORM_H

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>

#endif
